// A server on loopback answers only requests addressed to a loopback name. The address alone does
// not keep the web out: a page can point a DNS name of its own at 127.0.0.1 (DNS rebinding) and
// read, from the visitor's browser, what listens there — a dashboard reached through
// `kubectl port-forward`. Its requests then carry that name in Host, which no loopback name is.
import { Router } from 'express';

const loopbackNames = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Whether `address` (what a server listens on) is a loopback one. */
export function isLoopbackAddress(address: string): boolean {
  return address === 'localhost' || address === '::1' || /^127\.\d+\.\d+\.\d+$/.test(address);
}

/** Whether a Host header names a loopback host (any port). */
export function isLoopbackHost(host: string | undefined): boolean {
  const name = (host ?? '').toLowerCase().replace(/:\d+$/, '');
  return loopbackNames.has(name);
}

/** Answers 421 to a request whose Host is not a loopback name. */
export function loopbackNamesOnly(): Router {
  return Router().use((req, res, next) => {
    if (isLoopbackHost(req.headers.host)) return next();
    res.status(421).type('text').send('this server answers only to localhost, 127.0.0.1 and [::1]\n');
  });
}
