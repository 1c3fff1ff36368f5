import { randomBytes } from 'node:crypto';

/** What a webview page is built from. Plain strings: this builder knows nothing of the editor API. */
export interface WebviewPage {
  title: string;
  /** The webview's `cspSource` (where its local resources come from). */
  cspSource: string;
  /** A fresh nonce per page, from {@link newNonce}. */
  nonce: string;
  /** The bundled script, as a webview URI. */
  scriptUri: string;
  /** Style sheets, as webview URIs. */
  styleUris: string[];
}

/** A nonce for a page's Content Security Policy: 128 random bits from `crypto`, base64. */
export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

/** The Content Security Policy of a page: nothing by default, scripts only with the nonce, styles and fonts from the extension. */
export function contentSecurityPolicy(page: Pick<WebviewPage, 'cspSource' | 'nonce'>): string {
  return [
    "default-src 'none'",
    `img-src ${page.cspSource} data:`,
    `style-src ${page.cspSource} 'nonce-${page.nonce}'`,
    `font-src ${page.cspSource}`,
    `script-src 'nonce-${page.nonce}'`,
  ].join('; ');
}

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

/**
 * The HTML of a webview panel: a strict CSP, the style sheets, an empty `#app` and the script. No
 * data is ever written into the page: the script asks the host for it once loaded (ready handshake).
 */
export function buildWebviewHtml(page: WebviewPage): string {
  const styles = page.styleUris
    .map((u) => `<link rel="stylesheet" href="${escapeHtml(u)}">`)
    .join('\n    ');
  return `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <meta http-equiv="Content-Security-Policy" content="${escapeHtml(contentSecurityPolicy(page))}">
    <meta name="viewport" content="width=device-width, initial-scale=1.0">
    <title>${escapeHtml(page.title)}</title>
    ${styles}
  </head>
  <body>
    <div id="app" aria-live="polite"><p class="loading">Loading…</p></div>
    <script nonce="${escapeHtml(page.nonce)}" src="${escapeHtml(page.scriptUri)}"></script>
  </body>
</html>
`;
}

/**
 * A page that only says something (a panel that cannot be restored, say): the same strict policy
 * with no script and no style allowed at all.
 */
export function buildMessageHtml(title: string, message: string): string {
  return `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8">
    <meta http-equiv="Content-Security-Policy" content="default-src 'none'">
    <title>${escapeHtml(title)}</title>
  </head>
  <body><p>${escapeHtml(message)}</p></body>
</html>
`;
}
