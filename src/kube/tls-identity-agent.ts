// The keep-alive agent of one TLS identity. The client makes one per CA, client certificate and
// key (client.ts), so its pool key need not name them: node's https.Agent writes them into the key
// of every request (the CA, a Buffer, as base64 each time), about 1 ms of CPU per environment in a burst.
import http from 'node:http';
import https from 'node:https';

export class TlsIdentityAgent extends https.Agent {
  /** Host, port, local address and family as http.Agent keys them, and a server name other than the host. */
  override getName(options: https.RequestOptions = {}): string {
    const name = http.Agent.prototype.getName.call(this, options);
    return options.servername && options.servername !== options.host ? `${name}:${options.servername}` : name;
  }
}
