// createOnce: a create whose outcome is unknown is looked up before it is sent again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createOnce } from './octokit-create-once.js';

const failure = (status: number) => Object.assign(new Error(`status ${status}`), { status, request: {} });
const client = (retries: number) => ({ retryPolicy: { retries, delayMs: () => 1 } });

/** A GitHub that performs each create; `lose` says which answers are lost (502 after the write). */
function github(lose: (attempt: number) => boolean) {
  const objects: number[] = [];
  const calls: string[] = [];
  return {
    objects,
    calls,
    steps: {
      find: async () => (calls.push('find'), objects[0]),
      create: async () => {
        calls.push('create');
        objects.push(100 + objects.length);
        if (lose(calls.filter((c) => c === 'create').length)) throw failure(502);
        return objects.at(-1)!;
      },
    },
  };
}

test('a create that succeeds is sent once, and nothing is looked up', async () => {
  const gh = github(() => false);
  assert.equal(await createOnce(client(3), gh.steps), 100);
  assert.deepEqual(gh.calls, ['create']);
});

test('a create whose answer was lost is found and adopted, not sent again', async () => {
  const gh = github(() => true);
  assert.equal(await createOnce(client(3), gh.steps), 100);
  assert.deepEqual(gh.calls, ['create', 'find']);
  assert.deepEqual(gh.objects, [100]);
});

test('a create that failed before GitHub wrote it is sent again after the look finds nothing', async () => {
  const calls: string[] = [];
  let failures = 2;
  const result = await createOnce(client(3), {
    find: async () => (calls.push('find'), undefined),
    create: async () => {
      calls.push('create');
      if (failures-- > 0) throw failure(503);
      return 7;
    },
  });
  assert.equal(result, 7);
  assert.deepEqual(calls, ['create', 'find', 'create', 'find', 'create']);
});

test('a refusal is thrown at once; after the last retry the failure is thrown once a last look found nothing', async () => {
  const calls: string[] = [];
  const refused = createOnce(client(3), {
    find: async () => (calls.push('find'), 1),
    create: async () => {
      calls.push('create');
      throw failure(422);
    },
  });
  await assert.rejects(refused, { status: 422 });
  assert.deepEqual(calls, ['create']);

  calls.length = 0;
  const down = createOnce(client(1), {
    find: async () => (calls.push('find'), undefined),
    create: async () => {
      calls.push('create');
      throw failure(500);
    },
  });
  await assert.rejects(down, { status: 500 });
  assert.deepEqual(calls, ['create', 'find', 'create', 'find']);
});

test('without a retry policy (retries disabled) a lost answer is still looked up once', async () => {
  const gh = github(() => true);
  assert.equal(await createOnce({}, gh.steps), 100);
  assert.deepEqual(gh.calls, ['create', 'find']);
});
