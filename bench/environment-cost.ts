// What one stretch of the operator's work cost per environment: API writes (from the audit log,
// by verb and resource), operator CPU ms, GitHub requests — with issue 24's targets. Pure.
import type { AuditEvent } from '../test/cluster/audit-log.js';
import { atMost, figure, type Figure } from './figures.js';
import { countBy, ratio } from './stats.js';

export interface CostWindow {
  environments: number;
  /** The operator's writes in the window. */
  writes: readonly AuditEvent[];
  githubRequests: ReadonlyArray<{ method: string; path: string; operationId?: string; status: number }>;
  cpuSeconds: number;
}

export const verbResource = (w: AuditEvent) =>
  `${w.verb} ${w.objectRef?.resource ?? '?'}${w.objectRef?.subresource ? `/${w.objectRef.subresource}` : ''}`;

/** Distinct objects created or applied: not a status, not an Event, not the PreviewEnvironment (its spec write is the +1 of the target). */
export function objectsApplied(writes: readonly AuditEvent[]): number {
  const skipped = ['events', 'previewenvironments'];
  const applies = (w: AuditEvent) => ['create', 'patch', 'update'].includes(w.verb) && !w.objectRef?.subresource;
  const applied = writes.filter((w) => applies(w) && !skipped.includes(w.objectRef?.resource ?? ''));
  return new Set(applied.map((w) => `${w.objectRef?.resource}/${w.objectRef?.namespace}/${w.objectRef?.name}`)).size;
}

/** Counts per environment, "patch previewenvironments/status 2.8, …". */
function perEnvironment(text: string, environments: number): string {
  return text.replace(/ (\d+)(?=,|$)/g, (_, n: string) => ` ${+(Number(n) / environments).toFixed(2)}`);
}

export function costFigures(scenario: number, label: string, w: CostWindow): Figure[] {
  const n = w.environments;
  const limit = objectsApplied(w.writes) / n + 2;
  const writesTarget = atMost(limit, `≤ objects + 2 = ${+limit.toFixed(1)}`);
  return [
    figure(scenario, `${label}: API writes per environment`, w.writes.length / n, 'count', writesTarget),
    figure(scenario, `${label}: operator CPU per environment`, (1000 * w.cpuSeconds) / n, 'ms', atMost(15, '≤ 15 ms')),
    figure(scenario, `${label}: GitHub requests per environment`, w.githubRequests.length / n, 'count', atMost(7)),
  ];
}

export function costNotes(label: string, w: CostWindow): string[] {
  const gh = countBy(w.githubRequests, (r) => `${r.method} ${r.operationId ?? r.path}${r.status === 304 ? ' (304)' : ''}`);
  return [
    `${label}: ${w.writes.length} operator API writes and ${w.githubRequests.length} GitHub requests for ${w.environments} environments.`,
    `${label}: API writes per environment by verb/resource: ${perEnvironment(countBy(w.writes, verbResource), w.environments)}.`,
    `${label}: GitHub requests per environment by operation: ${perEnvironment(gh, w.environments)}.`,
  ];
}

/** Per environment at each larger size ÷ at the smallest: cost flat in the work (±15 %). */
export function flatness(windows: readonly CostWindow[]): Figure[] {
  const [first, ...rest] = windows;
  const cpu = (w: CostWindow) => w.cpuSeconds / w.environments;
  const writes = (w: CostWindow) => w.writes.length / w.environments;
  const flat = atMost(1.15, '≤ 1.15×');
  return rest.flatMap((w) => [
    figure(4, `operator CPU per environment, ${w.environments} ÷ ${first!.environments}`, ratio(cpu(w), cpu(first!)), 'ratio', flat),
    figure(4, `API writes per environment, ${w.environments} ÷ ${first!.environments}`, ratio(writes(w), writes(first!)), 'ratio', flat),
  ]);
}
