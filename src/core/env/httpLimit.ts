import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * A fetch for the streamable-HTTP client that stops reading a POST response (one request's answer)
 * after `limit` bytes, so a runaway server cannot exhaust memory; `onOverflow` is told first.
 */
export function limitedFetch(limit: number, onOverflow: () => void): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (!response.body || (init?.method ?? 'GET').toUpperCase() !== 'POST') return response;
    let seen = 0;
    const counter = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > limit) {
          onOverflow();
          controller.error(new Error(`response larger than ${limit} bytes`));
        } else {
          controller.enqueue(chunk);
        }
      },
    });
    return new Response(response.body.pipeThrough(counter), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
