// HTTP/1.1 to the API server over a keep-alive agent: a plain http:// server (`kubectl proxy`), a
// kubeconfig's proxy-url, or a TLS server that does not offer HTTP/2. One connection per request in flight.
import http from 'node:http';
import https from 'node:https';
import { noAnswerError, type ApiAnswer, type ApiCall, type ApiTransport } from './api-transport.js';

export class Http1Transport implements ApiTransport {
  constructor(
    private readonly agent: http.Agent,
    private readonly isHttps: boolean,
  ) {}

  send(call: ApiCall): Promise<ApiAnswer> {
    return new Promise((resolve, reject) => {
      const request = (this.isHttps ? https : http).request(call.url, {
        method: call.method,
        headers: call.headers,
        agent: this.agent,
        signal: call.signal,
      });
      if (call.timeoutMs > 0) request.setTimeout(call.timeoutMs, () => request.destroy(noAnswerError(call)));
      request.once('response', (response) =>
        resolve({
          status: response.statusCode ?? 0,
          contentType: response.headers['content-type'],
          contentLength: response.headers['content-length'] === undefined ? undefined : Number(response.headers['content-length']),
          body: response,
          untimed: () => {
            request.setTimeout(0);
            response.socket?.setKeepAlive(true, 30_000);
          },
          close: () => request.destroy(),
        }),
      );
      request.once('error', reject);
      request.end(call.body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
