import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PrometheusUnavailableError, queryPrometheus, resultOf } from './prometheus-query.js';

describe('prometheus query', () => {
  let server: Server;
  let url: string;
  let answer: { code: number; body: string };
  const queries: string[] = [];
  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        queries.push(`${req.method} ${req.url} ${new URLSearchParams(body).get('query')}`);
        res.writeHead(answer.code, { 'content-type': 'application/json' }).end(answer.body);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((r) => server.close(r)));

  it('reads the first value of a vector, and posts the query to /api/v1/query', async () => {
    answer = {
      code: 200,
      body: JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [1, '0.995'] }] } }),
    };
    assert.deepEqual(await queryPrometheus(url, 'up'), { kind: 'value', value: 0.995 });
    assert.equal(queries.at(-1), 'POST /api/v1/query up');
  });

  it('an empty vector and NaN are no samples, not a value', () => {
    assert.deepEqual(resultOf({ resultType: 'vector', result: [] }), { kind: 'empty' });
    assert.deepEqual(resultOf({ resultType: 'vector', result: [{ value: [1, 'NaN'] }] }), { kind: 'empty' });
    assert.deepEqual(resultOf({ resultType: 'scalar', result: [1, '0.5'] }), { kind: 'value', value: 0.5 });
    assert.throws(() => resultOf({ resultType: 'matrix', result: [] }), PrometheusUnavailableError);
  });

  it('a refused query or an unreachable server is an error, never a value', async () => {
    answer = { code: 400, body: JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error' }) };
    await assert.rejects(
      queryPrometheus(url, 'up{'),
      (err: Error) => err instanceof PrometheusUnavailableError && /bad_data: parse error/.test(err.message),
    );
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((r) => closed.close(r));
    await assert.rejects(
      queryPrometheus(deadUrl, 'up'),
      (err: Error) => err instanceof PrometheusUnavailableError && /unreachable: ECONNREFUSED/.test(err.message),
    );
  });
});
