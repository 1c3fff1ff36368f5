/**
 * Every command the extension contributes, with the arguments it takes. A unit test checks that
 * package.json's contributions match this table.
 */
import type { TraceTreeNode } from '../core/trace/tree';

/** A call to diff: given by id, or the tree node a context menu passes. */
export type CallTarget = { file: string; callId: string } | TraceTreeNode;

export interface CommandArgs {
  'rehearsal.refreshTraces': [];
  'rehearsal.openTrace': [file?: string];
  'rehearsal.showCallDiff': [target?: CallTarget];
  'rehearsal.showReport': [target?: { file: string } | TraceTreeNode];
  'rehearsal.installGpuSupport': [];
}

/** A command id. */
export type CommandId = keyof CommandArgs;

/** Titles as the palette shows them (category "Rehearsal"). */
export const COMMANDS: { [K in CommandId]: { title: string; icon?: string } } = {
  'rehearsal.refreshTraces': { title: 'Refresh Trace Explorer', icon: '$(refresh)' },
  'rehearsal.openTrace': { title: 'Open Trace...', icon: '$(folder-opened)' },
  'rehearsal.showCallDiff': { title: 'Show Call Diff (Rehearsed vs Actual)', icon: '$(diff)' },
  'rehearsal.showReport': { title: 'Show Fidelity Report', icon: '$(graph)' },
  'rehearsal.installGpuSupport': { title: 'Install GPU Support', icon: '$(chip)' },
};

/** The category under which every command appears in the palette. */
export const COMMAND_CATEGORY = 'Rehearsal';

/** View ids. */
export const VIEWS = {
  container: 'rehearsal',
  traceExplorer: 'rehearsal.traceExplorer',
} as const;
