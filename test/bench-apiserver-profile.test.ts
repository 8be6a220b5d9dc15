import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePprofTop } from '../bench/apiserver-profile.js';

// The shape `go tool pprof -top -cum` prints (Go 1.26), cut down.
const top = `File: kube-local
Type: cpu
Duration: 30.10s, Total samples = 24.60s (81.73%)
Showing nodes accounting for 14.60s, 58.38% of 24.60s total
      flat  flat%   sum%        cum   cum%
         0     0%     0%      9.04s 36.15%  k8s.io/apiserver/pkg/endpoints/handlers/finisher.finishRequest.func1
     0.01s  0.04%  0.04%      7.75s 30.99%  k8s.io/apiserver/pkg/storage/etcd3.(*store).GuaranteedUpdate
         0     0%  0.04%      4.92s 19.67%  k8s.io/apiserver/pkg/server/filters.(*priorityAndFairnessHandler).Handle
         0     0%  0.04%      2.75s 11.00%  runtime.gcBgMarkWorker
     0.14s  0.56%  0.60%      3.51s 14.03%  runtime.mallocgc
         0     0%  0.60%      1.65s  6.60%  k8s.io/apimachinery/pkg/util/managedfields/internal.(*FieldManager).Update
     0.03s  0.12%  0.72%      1.18s  4.72%  k8s.io/apiserver/pkg/endpoints/handlers.(*WatchServer).HandleHTTP
         0     0%  0.72%      1.11s  4.44%  go.etcd.io/etcd/client/v3.(*Client).unaryClientInterceptor.func1
     0.10s   0.4%  1.12%      0.40s  1.60%  runtime.mapaccess2_faststr (inline)
`;

test('the summary gives the sampled CPU against the window and the named areas\' cumulative shares', () => {
  const summary = parsePprofTop(top, 30);
  assert.equal(summary.headline,
    '24.6 CPU s sampled in 30 s (0.82 cores); cumulative shares, overlapping: writes in storage (read, patch, field management, etcd) 31 %, '
    + 'field management (managedFields, server-side apply) 7 %, serving watches 5 %, etcd round trips 4 %, priority and fairness 20 %, '
    + 'garbage collection (background) 11 %, allocation (GC assists included) 14 %');
  assert.match(summary.top, /^File: kube-local/);
  assert.match(summary.top, /runtime\.mapaccess2_faststr/);
});

test('a profile in milliseconds is read in seconds', () => {
  assert.match(parsePprofTop(top.replace('Total samples = 24.60s', 'Total samples = 820ms'), 1).headline, /^0\.8 CPU s sampled in 1 s \(0\.82 cores\)/);
});
