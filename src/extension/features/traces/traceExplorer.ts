import * as vscode from 'vscode';
import type { AnnotationLibrary } from '../../../core/annotations/library';
import { Disposable } from '../../../core/base/disposable';
import type { TraceLibrary } from '../../../core/trace/index/library';
import type { TraceTreeNode, TreeOptions } from '../../../core/explorer/tree';
import type { NodeStatus } from '../../../core/fidelity/verdicts';
import {
  episodeNode,
  RUN_PAGE_SIZE,
  traceTreeChildren,
  traceTreeParent,
} from '../../../core/explorer/tree';
import {
  isMemoryNode,
  memoryTreeChildren,
  memoryTreeParent,
} from '../../../core/explorer/memoryTree';
import type { TreeFilter, TreeSort } from '../../../core/explorer/treeFilter';
import { describeTreeState, isFilterActive } from '../../../core/explorer/treeFilter';

const ICONS: Record<NodeStatus, vscode.ThemeIcon> = {
  ok: new vscode.ThemeIcon('pass', new vscode.ThemeColor('testing.iconPassed')),
  mismatch: new vscode.ThemeIcon(
    'diff-modified',
    new vscode.ThemeColor('editorWarning.foreground'),
  ),
  error: new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed')),
  running: new vscode.ThemeIcon('loading~spin'),
  pending: new vscode.ThemeIcon('circle-outline'),
  info: new vscode.ThemeIcon('circle-small-filled'),
};

const KIND_ICONS: Partial<Record<TraceTreeNode['kind'], string>> = {
  run: 'history',
  turn: 'comment',
  episode: 'debug-alt-small',
  memory: 'lightbulb',
  memoryLine: 'dash',
  attempt: 'debug-alt-small',
  memoryCall: 'tools',
};

/**
 * The Trace Explorer: runs → episodes → turns → calls (or, sorted by fidelity, runs → calls), and
 * under a committed episode of private rehearsal the memory it read → its lines → their calls,
 * shaped by the core's tree functions with the current filter, order and annotations, and refreshed
 * whenever the library or the annotations change (a run being written shows up live). Large traces
 * are indexed when their run is first expanded.
 */
export class TraceExplorerProvider
  extends Disposable
  implements vscode.TreeDataProvider<TraceTreeNode>
{
  private readonly changed = this._register(new vscode.EventEmitter<TraceTreeNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  private readonly stateChanged = this._register(new vscode.EventEmitter<void>());
  /** Fires when the filter or the order changes. */
  readonly onDidChangeState = this.stateChanged.event;
  private filterValue: TreeFilter = {};
  private sortValue: TreeSort = 'trace';
  private readonly pages = new Map<string, number>();

  constructor(
    private readonly library: TraceLibrary,
    private readonly annotations: AnnotationLibrary,
  ) {
    super();
    this._register(library.onDidChange(() => this.changed.fire(undefined)));
    this._register(annotations.onDidChange(() => this.changed.fire(undefined)));
  }

  get filter(): TreeFilter {
    return this.filterValue;
  }

  get sort(): TreeSort {
    return this.sortValue;
  }

  /** True when the filter hides anything. */
  get filtered(): boolean {
    return isFilterActive(this.filterValue);
  }

  /** The filter and order in words (the view's description). */
  get stateDescription(): string {
    return describeTreeState(this.filterValue, this.sortValue);
  }

  setFilter(filter: TreeFilter): void {
    this.filterValue = { ...filter };
    this.refreshAll();
  }

  setSort(sort: TreeSort): void {
    this.sortValue = sort;
    this.refreshAll();
  }

  /** Shows the next page of a run's episodes (or calls). */
  showMore(file: string): void {
    this.pages.set(file, (this.pages.get(file) ?? RUN_PAGE_SIZE) + RUN_PAGE_SIZE);
    this.changed.fire(undefined);
  }

  /** What shapes the tree now. */
  options(): TreeOptions {
    return {
      filter: this.filterValue,
      sort: this.sortValue,
      annotations: (file) => this.annotations.get(file),
      pageSize: (file) => this.pages.get(file) ?? RUN_PAGE_SIZE,
    };
  }

  getTreeItem(node: TraceTreeNode): vscode.TreeItem {
    const expandRuns = node.kind === 'run' && !this.library.isLazy(node.file);
    const collapsible = !node.hasChildren
      ? vscode.TreeItemCollapsibleState.None
      : expandRuns
        ? vscode.TreeItemCollapsibleState.Expanded
        : vscode.TreeItemCollapsibleState.Collapsed;
    const item = new vscode.TreeItem(node.label, collapsible);
    item.id = node.id;
    item.description = node.description;
    item.tooltip = node.tooltip;
    item.contextValue = `rehearsal.${node.kind}${node.annotations ? '.annotated' : ''}`;
    const kindIcon = KIND_ICONS[node.kind];
    item.iconPath =
      node.kind === 'call' || node.status !== 'info' || !kindIcon
        ? ICONS[node.status]
        : new vscode.ThemeIcon(kindIcon);
    if (node.kind === 'call') {
      item.command = {
        command: 'rehearsal.showCallDiff',
        title: 'Show Call Diff',
        arguments: [{ file: node.file, callId: node.entityId }],
      };
      item.accessibilityInformation = { label: `${node.label} call, ${node.description}` };
    }
    // A turn whose tool calls did not parse has no call to open: it opens its own text at the error.
    if (node.kind === 'turn' && node.status === 'error' && !node.hasChildren) {
      item.command = {
        command: 'rehearsal.showTurnText',
        title: 'Show Turn Text',
        arguments: [{ file: node.file, turnId: node.entityId }],
      };
    }
    if (node.kind === 'memoryCall') {
      item.command = {
        command: 'rehearsal.showCallDiff',
        title: 'Show Call Diff',
        arguments: [{ file: node.file, callId: node.entityId }],
      };
      item.accessibilityInformation = { label: `${node.label}, call ${node.description}` };
    }
    if (node.kind === 'attempt') {
      item.command = {
        command: 'rehearsal.openTrajectory',
        title: 'Open Trajectory',
        arguments: [{ file: node.file, episodeId: node.entityId }],
      };
    }
    if (node.kind === 'more') {
      item.iconPath = new vscode.ThemeIcon('more');
      item.command = { command: 'rehearsal.showMore', title: 'Show More', arguments: [node.file] };
    }
    if (node.kind === 'run' || node.kind === 'problem')
      item.resourceUri = vscode.Uri.file(node.file);
    return item;
  }

  /** The runs (no node), or a node's children; a memory's rows come from the trace's events. */
  getChildren(): TraceTreeNode[];
  getChildren(node?: TraceTreeNode): TraceTreeNode[] | Promise<TraceTreeNode[]>;
  getChildren(node?: TraceTreeNode): TraceTreeNode[] | Promise<TraceTreeNode[]> {
    // Opening a large trace's run indexes it in the background; its children follow when done.
    if (node?.kind === 'run' && this.library.isLazy(node.file))
      void this.library.ensureIndex(node.file);
    // A memory's rows are read from the trace's events, not only its index.
    if (node && isMemoryNode(node)) return memoryTreeChildren(this.library, node);
    return traceTreeChildren(this.library, node, this.options());
  }

  getParent(node: TraceTreeNode): TraceTreeNode | undefined | Promise<TraceTreeNode | undefined> {
    if (isMemoryNode(node))
      return memoryTreeParent(this.library, node, (file, episode) =>
        episodeNode(file, this.library.index(file)!, episode),
      );
    return traceTreeParent(this.library, node, this.options());
  }

  private refreshAll(): void {
    this.changed.fire(undefined);
    this.stateChanged.fire();
  }
}
