import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AnnotationLibrary } from '../../../core/annotations/library';
import type { AnnotatedRun, AnnotationTreeNode } from '../../../core/annotations/tree';
import { annotationTreeChildren, annotationTreeParent } from '../../../core/annotations/tree';
import { Disposable } from '../../../core/base/disposable';
import type { TraceLibrary } from '../../../core/trace/index/library';
import { tracesNewestFirst } from '../../../core/explorer/tree';

const SEVERITY_ICONS: Record<string, vscode.ThemeIcon> = {
  critical: new vscode.ThemeIcon('error', new vscode.ThemeColor('problemsErrorIcon.foreground')),
  major: new vscode.ThemeIcon('warning', new vscode.ThemeColor('problemsWarningIcon.foreground')),
  minor: new vscode.ThemeIcon('info', new vscode.ThemeColor('problemsInfoIcon.foreground')),
};

/**
 * The Annotations view: every run with annotations (newest first), and under each its annotations
 * in call order. Clicking one opens its call's diff at the annotated path.
 */
export class AnnotationsViewProvider
  extends Disposable
  implements vscode.TreeDataProvider<AnnotationTreeNode>
{
  private readonly changed = this._register(
    new vscode.EventEmitter<AnnotationTreeNode | undefined>(),
  );
  readonly onDidChangeTreeData = this.changed.event;

  constructor(
    private readonly library: TraceLibrary,
    private readonly annotations: AnnotationLibrary,
  ) {
    super();
    this._register(annotations.onDidChange(() => this.changed.fire(undefined)));
    this._register(
      library.onDidChange((file) => {
        if (file === undefined) this.changed.fire(undefined);
      }),
    );
  }

  /** The runs whose annotations have been read, newest first. */
  runs(): AnnotatedRun[] {
    const out: AnnotatedRun[] = [];
    for (const file of tracesNewestFirst(this.library)) {
      const set = this.annotations.get(file);
      if (!set) continue;
      const runId =
        this.library.index(file)?.run?.runId ??
        this.library.head(file)?.run?.runId ??
        path.basename(path.dirname(file));
      out.push({ file, runId, set });
    }
    return out;
  }

  getTreeItem(node: AnnotationTreeNode): vscode.TreeItem {
    const item = new vscode.TreeItem(
      node.label,
      node.kind === 'run'
        ? vscode.TreeItemCollapsibleState.Expanded
        : vscode.TreeItemCollapsibleState.None,
    );
    item.id = node.id;
    item.description = node.description;
    item.tooltip = node.tooltip;
    item.contextValue = `rehearsal.annotation.${node.kind}`;
    if (node.kind === 'run') {
      item.iconPath = new vscode.ThemeIcon('history');
      item.resourceUri = vscode.Uri.file(path.join(path.dirname(node.file), 'annotations.jsonl'));
    } else {
      const a = node.annotation!;
      item.iconPath =
        a.verdict === 'acceptable'
          ? new vscode.ThemeIcon('check', new vscode.ThemeColor('testing.iconPassed'))
          : SEVERITY_ICONS[a.severity ?? 'major'];
      item.command = {
        command: 'rehearsal.openAnnotation',
        title: 'Go to Annotation',
        arguments: [node],
      };
    }
    return item;
  }

  getChildren(node?: AnnotationTreeNode): AnnotationTreeNode[] {
    return annotationTreeChildren(this.runs(), node);
  }

  getParent(node: AnnotationTreeNode): AnnotationTreeNode | undefined {
    return annotationTreeParent(this.runs(), node);
  }
}
