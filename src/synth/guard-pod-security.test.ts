import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkPodSecurity, podTemplateOf } from './guard-pod-security.js';

const restrictedContainer = {
  name: 'app',
  image: 'app:1',
  securityContext: {
    allowPrivilegeEscalation: false,
    runAsNonRoot: true,
    seccompProfile: { type: 'RuntimeDefault' },
    capabilities: { drop: ['ALL'] },
  },
};

const checks = (spec: Record<string, unknown>, level: 'baseline' | 'restricted' = 'restricted', annotations?: Record<string, string>) =>
  checkPodSecurity(spec, annotations, level).map((v) => `${v.check}@${v.path}`);

describe('Pod Security Standards', () => {
  it('a pod written for restricted passes restricted and baseline', () => {
    const spec = { containers: [restrictedContainer], volumes: [{ name: 'data', emptyDir: {} }] };
    assert.deepEqual(checks(spec), []);
    assert.deepEqual(checks(spec, 'baseline'), []);
  });

  it('pod-level runAsNonRoot and seccomp cover every container', () => {
    const spec = {
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [{ name: 'a', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }],
    };
    assert.deepEqual(checks(spec), []);
  });

  it('a privileged container fails baseline with the field named', () => {
    const privileged = { ...restrictedContainer, securityContext: { ...restrictedContainer.securityContext, privileged: true } };
    const spec = { containers: [privileged] };
    assert.deepEqual(checks(spec, 'baseline'), ['privileged@containers[0].securityContext.privileged']);
  });

  it('host namespaces, hostPath, host ports, unsafe sysctls and capabilities fail baseline', () => {
    const spec = {
      hostNetwork: true,
      hostPID: true,
      securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }] },
      volumes: [{ name: 'root', hostPath: { path: '/' } }],
      containers: [
        {
          name: 'c',
          ports: [{ containerPort: 80, hostPort: 80 }],
          securityContext: { capabilities: { add: ['SYS_ADMIN', 'CHOWN'] }, procMount: 'Unmasked', seccompProfile: { type: 'Unconfined' } },
        },
      ],
    };
    assert.deepEqual(checks(spec, 'baseline').sort(), [
      'capabilities@containers[0].securityContext.capabilities.add',
      'hostNamespaces@hostNetwork',
      'hostNamespaces@hostPID',
      'hostPathVolumes@volumes[0].hostPath',
      'hostPorts@containers[0].ports[0].hostPort',
      'procMount@containers[0].securityContext.procMount',
      'seccompProfile@containers[0].securityContext.seccompProfile.type',
      'sysctls@securityContext.sysctls[0].name',
    ]);
  });

  it('restricted wants non-root, no escalation, a seccomp profile and ALL capabilities dropped, in init and ephemeral containers too', () => {
    const spec = { initContainers: [{ name: 'init' }], containers: [{ name: 'app', securityContext: { runAsUser: 0 } }] };
    assert.deepEqual(checks(spec).sort(), [
      'allowPrivilegeEscalation@containers[0].securityContext.allowPrivilegeEscalation',
      'allowPrivilegeEscalation@initContainers[0].securityContext.allowPrivilegeEscalation',
      'capabilities@containers[0].securityContext.capabilities.drop',
      'capabilities@initContainers[0].securityContext.capabilities.drop',
      'runAsNonRoot@containers[0].securityContext.runAsNonRoot',
      'runAsNonRoot@initContainers[0].securityContext.runAsNonRoot',
      'runAsUser@containers[0].securityContext.runAsUser',
      'seccompProfile@containers[0].securityContext.seccompProfile.type',
      'seccompProfile@initContainers[0].securityContext.seccompProfile.type',
    ]);
    assert.deepEqual(checks(spec, 'baseline'), [], 'baseline allows all of that');
  });

  it('restricted allows only NET_BIND_SERVICE to be added and only the safe volume types', () => {
    const spec = {
      volumes: [
        { name: 'nfs', nfs: { server: 'x', path: '/' } },
        { name: 'cm', configMap: { name: 'x' } },
      ],
      containers: [
        {
          ...restrictedContainer,
          securityContext: { ...restrictedContainer.securityContext, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE', 'CHOWN'] } },
        },
      ],
    };
    assert.deepEqual(checks(spec).sort(), ['capabilities@containers[0].securityContext.capabilities.add', 'volumeTypes@volumes[0].nfs']);
  });

  it('AppArmor annotations other than runtime/default or localhost/* fail baseline', () => {
    const spec = { containers: [restrictedContainer] };
    assert.deepEqual(checks(spec, 'baseline', { 'container.apparmor.security.beta.kubernetes.io/app': 'unconfined' }), [
      'appArmorProfile@metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]',
    ]);
    assert.deepEqual(checks(spec, 'baseline', { 'container.apparmor.security.beta.kubernetes.io/app': 'runtime/default' }), []);
  });

  it('privileged allows anything', () => {
    assert.deepEqual(
      checkPodSecurity({ hostNetwork: true, containers: [{ name: 'x', securityContext: { privileged: true } }] }, undefined, 'privileged'),
      [],
    );
  });

  it('finds the pod template of every workload kind', () => {
    const pod = { spec: { containers: [] } };
    assert.equal(podTemplateOf({ apiVersion: 'apps/v1', kind: 'Deployment', spec: { template: pod } })?.path, 'spec.template.spec');
    assert.equal(podTemplateOf({ apiVersion: 'apps/v1', kind: 'DaemonSet', spec: { template: pod } })?.path, 'spec.template.spec');
    assert.equal(
      podTemplateOf({ apiVersion: 'batch/v1', kind: 'CronJob', spec: { jobTemplate: { spec: { template: pod } } } })?.path,
      'spec.jobTemplate.spec.template.spec',
    );
    assert.equal(podTemplateOf({ apiVersion: 'v1', kind: 'Pod', spec: { containers: [] } })?.path, 'spec');
    assert.equal(podTemplateOf({ apiVersion: 'v1', kind: 'ConfigMap', data: {} }), undefined);
    assert.equal(podTemplateOf({ apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm', spec: { template: pod } }), undefined);
  });
});
