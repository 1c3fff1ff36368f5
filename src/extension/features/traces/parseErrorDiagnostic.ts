import * as vscode from 'vscode';

/**
 * The error of a policy output that did not parse, where it failed: from the offset to the end of
 * its line (one character when the line ends there), for a turn's text or a call's rehearsed side.
 */
export function parseErrorDiagnostic(
  document: vscode.TextDocument,
  offset: number,
  message: string,
): vscode.Diagnostic {
  const at = document.positionAt(offset);
  const line = document.lineAt(at.line).range;
  const diagnostic = new vscode.Diagnostic(
    new vscode.Range(at, line.end.isAfter(at) ? line.end : at.translate(0, 1)),
    message,
    vscode.DiagnosticSeverity.Error,
  );
  diagnostic.source = 'Rehearsal';
  return diagnostic;
}
