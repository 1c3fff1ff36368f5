import * as assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { limitedFetch } from '../../src/core/env/httpLimit';

const LIMIT = 1_000;

/** Answers a POST by its path: `/declared/N` with a Content-Length, `/chunked/N` without, `/gzip/N` compressed. */
function answering(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    const [, how, size] = req.url!.split('/');
    const body = Buffer.alloc(Number(size), 'a');
    if (how === 'declared') res.writeHead(200, { 'content-length': body.length }).end(body);
    else if (how === 'gzip') {
      const packed = gzipSync(body);
      res
        .writeHead(200, { 'content-encoding': 'gzip', 'content-length': packed.length })
        .end(packed);
    } else {
      res.writeHead(200);
      res.write(body.subarray(0, body.length >> 1));
      res.end(body.subarray(body.length >> 1));
    }
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }),
    ),
  );
}

describe('environment: the HTTP answer limit', () => {
  let url: string;
  let server: Server;
  before(async () => ({ url, server } = await answering()));
  after(() => server.close());

  const read = async (path: string) => {
    let overflowed = false;
    const fetchLimited = limitedFetch(LIMIT, () => (overflowed = true));
    try {
      const r = await fetchLimited(`${url}${path}`, { method: 'POST', body: '{}' });
      return { bytes: (await r.arrayBuffer()).byteLength, overflowed };
    } catch (err) {
      return { error: String(err), overflowed };
    }
  };

  it('reads answers within the limit, whether they declare their length or not', async () => {
    assert.deepEqual(await read(`/declared/${LIMIT}`), { bytes: LIMIT, overflowed: false });
    assert.deepEqual(await read(`/chunked/${LIMIT}`), { bytes: LIMIT, overflowed: false });
    assert.deepEqual(await read(`/gzip/${LIMIT}`), { bytes: LIMIT, overflowed: false });
  });

  it('stops at the limit: a declared length over it, an undeclared one, and a small gzip that inflates past it', async () => {
    for (const path of [`/declared/${LIMIT + 1}`, `/chunked/${2 * LIMIT}`, `/gzip/${50 * LIMIT}`]) {
      const r = await read(path);
      assert.equal(r.overflowed, true, path);
      assert.match(r.error ?? '', /larger than 1000 bytes/, path);
    }
  });
});
