import { mkdir, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { useTempDir } from './tempDir';

/**
 * For each test of the enclosing `describe`, a fresh workspace with a `.vscode/` folder (`ws()`),
 * removed after it, and `writeMcpJson` to give it a `.vscode/mcp.json`.
 */
export function useMcpWorkspace(): {
  ws: () => string;
  writeMcpJson: (text: string) => Promise<void>;
} {
  const ws = useTempDir('rehearsal-ws-');
  beforeEach(async () => {
    await mkdir(path.join(ws(), '.vscode'));
  });
  return { ws, writeMcpJson: (text) => writeFile(path.join(ws(), '.vscode', 'mcp.json'), text) };
}
