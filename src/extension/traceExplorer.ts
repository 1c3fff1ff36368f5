import * as vscode from 'vscode';
import type { NodeStatus, TraceTreeNode } from '../core/trace/tree';
import { traceTreeChildren, traceTreeParent } from '../core/trace/tree';
import type { TraceLibrary } from '../core/trace/library';
import { Disposable } from '../core/base/disposable';

const ICONS: Record<NodeStatus, vscode.ThemeIcon> = {
  ok: new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed')),
  mismatch: new vscode.ThemeIcon('diff-modified', new vscode.ThemeColor('editorWarning.foreground')),
  error: new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed')),
  running: new vscode.ThemeIcon('loading~spin'),
  pending: new vscode.ThemeIcon('circle-outline'),
  info: new vscode.ThemeIcon('circle-small-filled'),
};

const KIND_ICONS: Partial<Record<TraceTreeNode['kind'], string>> = { run: 'history', turn: 'comment', episode: 'debug-alt-small' };

/**
 * The Trace Explorer: runs → episodes → turns → calls, shaped by the core's tree functions and
 * refreshed whenever the library reports a change (a run being written shows up live).
 */
export class TraceExplorerProvider extends Disposable implements vscode.TreeDataProvider<TraceTreeNode> {
  private readonly changed = this._register(new vscode.EventEmitter<TraceTreeNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly library: TraceLibrary) {
    super();
    this._register(library.onDidChange(() => this.changed.fire(undefined)));
  }

  getTreeItem(node: TraceTreeNode): vscode.TreeItem {
    const collapsible = !node.hasChildren
      ? vscode.TreeItemCollapsibleState.None
      : node.kind === 'run' ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed;
    const item = new vscode.TreeItem(node.label, collapsible);
    item.id = node.id;
    item.description = node.description;
    item.tooltip = node.tooltip;
    item.contextValue = `rehearsal.${node.kind}`;
    const kindIcon = KIND_ICONS[node.kind];
    item.iconPath = node.kind === 'call' || node.status !== 'info' || !kindIcon ? ICONS[node.status] : new vscode.ThemeIcon(kindIcon);
    if (node.kind === 'call') {
      item.command = { command: 'rehearsal.showCallDiff', title: 'Show Call Diff', arguments: [{ file: node.file, callId: node.entityId }] };
      item.accessibilityInformation = { label: `${node.label} call, ${node.description}` };
    }
    if (node.kind === 'run' || node.kind === 'problem') item.resourceUri = vscode.Uri.file(node.file);
    return item;
  }

  getChildren(node?: TraceTreeNode): TraceTreeNode[] {
    return traceTreeChildren(this.library, node);
  }

  getParent(node: TraceTreeNode): TraceTreeNode | undefined {
    return traceTreeParent(this.library, node);
  }
}
