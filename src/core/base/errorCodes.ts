/**
 * Every code a `StudioError` carries, each documented once: when it is raised and what the user
 * should do. The values are stable (traces, docs, tests and CLI output show them); docs/error-codes.md
 * lists them (a unit test keeps it in step). Codes that come from outside keep their own path: a tool
 * call's `error.code` (docs/task-format.md), parse errors and EnvACE's codes (`protocol/codes.ts`).
 */
export const STUDIO_ERROR_CODES = {
  USAGE:
    'A command-line argument or option is missing, unknown or out of range; the message names it: fix the command line (`rehearse <command> --help`).',
  ANNOTATIONS_BUSY:
    "Another process holds the lock on a run's annotations: wait for it, or delete the lock file if no such process runs.",
  ANNOTATIONS_NOT_A_FILE:
    "A run's annotations file is a symbolic link or not a regular file: move it aside (the trace is not affected).",
  ANNOTATIONS_TOO_LARGE:
    "A run's annotations file exceeds the read limit: move it aside to start a new one (the trace is not affected).",
  ANNOTATIONS_UNREADABLE: "A run's annotations file cannot be read: check its permissions.",
  ANNOTATION_LOST:
    'An annotation was written but does not read back: check the annotations file beside the trace.',
  ANNOTATION_WRITE_FAILED:
    'Writing to the annotations file failed (disk full, permissions); annotations already written are kept: free space or fix permissions.',
  DEVICE_UNAVAILABLE:
    'The policy cannot run on the chosen device (e.g. no CUDA provider): set rehearsal.policy.device to "cpu" or "auto".',
  EMPTY_PROMPT: 'The policy was asked to continue an empty prompt: a bug in the caller; report it.',
  ENDPOINT_AUTH:
    'An OpenAI-compatible endpoint refused the API key: set it with "Rehearsal: Set Endpoint API Key" or OPENAI_API_KEY.',
  ENDPOINT_ERROR:
    'An OpenAI-compatible endpoint answered with an error status: read its message and check the server and the model name.',
  ENDPOINT_UNREACHABLE:
    'An OpenAI-compatible endpoint cannot be reached: start the server or fix the base URL.',
  ENVACE_TOOL_SCHEMA_INVALID:
    "`rehearse export --format envace`: a tool's input schema holds what verl's OpenAIFunctionToolSchema refuses (a property's `enum` that is not a list), so EnvACE's dataset would drop the record without a word; the message names the tool, the task and the JSON path: fix the tool's schema, or leave its runs out (--runs).",
  EPISODE_FAILED:
    'An episode failed for a reason that is not a coded error; the message says why and the episode is recorded as failed.',
  GPU_INSTALLER_MISSING:
    "onnxruntime-node's CUDA installer script is missing: reinstall the studio.",
  GPU_INSTALL_FAILED:
    'Downloading the CUDA provider failed: allow access to the onnxruntime release feed and retry.',
  IMPORT_TOO_LARGE:
    'A file to import exceeds the import size limit: split it and import the parts.',
  IMPORT_UNREADABLE: 'A file to import cannot be read: check the path and its permissions.',
  INVALID_ANNOTATION:
    'An annotation about to be written fails the annotation schema: a bug in the caller; report it.',
  INVALID_ENDPOINT:
    "An endpoint's base URL is not a URL: give the server's base URL, e.g. http://127.0.0.1:8000/v1.",
  INVALID_ID:
    "A run, episode, call or annotation id has characters ids may not hold: use letters, digits, '.', '_', ':' or '-'.",
  INVALID_JUDGE_ENDPOINT:
    'The judge endpoint (--judge, rehearsal.judge.endpoint) is not an http(s) URL or holds credentials: give the base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1, and its key in REHEARSAL_JUDGE_API_KEY (the editor: Rehearsal: Set Judge API Key).',
  INVALID_TRACE_EVENT:
    'A trace event about to be written fails the trace schema: a bug in the caller; report it.',
  JUDGE_MODEL_REQUIRED:
    'The judge endpoint serves several models, or lists none: name one with --judge-model (the editor: rehearsal.judge.model).',
  MEMORY_PLAN_DOES_NOT_FIT:
    "A training run's memory plan (`rehearse train --dry-run`) needs more memory per GPU than the GPUs named: the message names the fixes (LoRA, gradient checkpointing, more GPUs, a shorter row or micro-batch).",
  MODEL_FILE_BROKEN:
    'A file of a policy folder (config, tokenizer, chat template, graph) cannot be loaded or lacks a value: re-export the model (`python3 -m trainer export`).',
  MODEL_FILE_MISSING:
    'A policy folder lacks a required file (config, tokenizer, ONNX graph or its weights): export the model with `python3 -m trainer export`.',
  MODEL_FOLDER_INCONSISTENT:
    "A policy folder's config.json disagrees with its graph or is out of range (the folder mixes two models): re-export it.",
  MODEL_NOT_FOUND:
    'No policy folder at the given path (or the default policy is not built): point at a model folder, or run `npm run train:default`.',
  NO_COMPARED_CALL:
    'A trace has no call with both a rehearsal and an actual response to compare: run a shadow-mode run first.',
  NO_ENVIRONMENT:
    "A mode that executes tools was started without an environment: give the task's servers.",
  NO_EPISODE:
    'A tool environment was used after it was disposed (or before an episode started): open a new one.',
  NO_REFERENCE: 'A task has no reference solution to play: add "reference" to the task file.',
  NO_REHEARSAL:
    'A policy that does not rehearse was asked to play imagined episodes: use shadow mode or a rehearsing policy.',
  NO_TASKS:
    'No task files (*.task.json) were found at the given paths: pass task files or a folder holding them.',
  PATH_OUTSIDE_WORKSPACE:
    "A file the studio was to write leads outside its folder (the workspace's .rehearsal/, or the --out you named) through a symbolic link or '..', is a link itself, or holds a NUL: remove the link, or name the folder you want written with --out.",
  POLICY_DECODE_FAILED:
    'A forward pass of the policy failed in onnxruntime; every request decoded in that pass failed with it, others go on: retry, and if it recurs run fewer episodes at once or use a smaller model.',
  POLICY_HOST_CRASHED:
    'The policy host process exited unexpectedly; the message ends with its stderr: read it and retry.',
  POLICY_HOST_ERROR: 'The policy host failed with an uncoded error; the message says why.',
  POLICY_HOST_MISSING:
    'The policy host script is missing: build the studio first (`npm run build`).',
  POLICY_HOST_OUT_OF_MEMORY:
    'The policy host ran out of memory: use a smaller model or shorter prompts, or allow it more memory.',
  POLICY_HOST_START_FAILED:
    "The policy host process could not be started: the message gives the operating system's reason.",
  POLICY_NOT_CONFIGURED:
    'The policy setting names a model folder but none is set: run "Rehearsal: Select Policy".',
  POLICY_NOT_LOADED:
    'The policy host was asked to generate before a model was loaded: a bug in the caller; report it.',
  PORT_IN_USE:
    'The port of `rehearse serve` or `rehearse collect` is in use: pass another --port, or --port 0 for a free one.',
  PORT_NOT_ALLOWED:
    'The port of `rehearse serve` or `rehearse collect` needs privileges this user lacks: pass a port above 1023, or --port 0.',
  PROMPT_TOO_LONG:
    "A prompt plus its new tokens exceeds the model's positions: shorten the task or lower max tokens.",
  REPLAY_INVALID:
    'A replay recording is not valid (schema, nesting past the depth bound): fix the recording (schemas/replay.schema.json).',
  REQUEST_INVALID:
    'A request to `rehearse serve` holds a number out of its range (`n`, `max_tokens`, `min_tokens`, `temperature`, `top_p`, `seed`; `min_tokens` above `max_tokens`): it is answered HTTP 400 naming the field and the range; fix the request.',
  ROLLOUTS_EMPTY:
    'An EnvACE rollout folder holds no <step>.jsonl files: pass the folder trainer.rollout_data_dir names.',
  ROLLOUTS_NOT_A_FOLDER:
    'An EnvACE rollout path is not a folder: pass the folder trainer.rollout_data_dir names.',
  ROLLOUTS_TOO_MANY:
    'An EnvACE rollout folder holds more files than one import reads: move some into another folder and import each.',
  ROLLOUTS_UNREADABLE:
    'An EnvACE rollout folder cannot be read: check the path and its permissions.',
  ROLLOUT_FAILED:
    "`rehearse rollout`'s run did not complete; the message gives the run's error code and message.",
  ROLLOUT_FILE_TOO_LARGE:
    'An EnvACE rollout file exceeds the per-file read limit: split it by lines and import the parts.',
  RUN_SPEC_INVALID:
    'A training run file has faults (missing or wrong fields for its backend); `details.faults` lists them: fix the run file (docs/training-runs.md).',
  RUN_SPEC_UNREADABLE:
    'A training run file cannot be read or is not JSON: check the path and fix the file.',
  RUN_SPEC_PATHS_MISSING:
    'A training run file names a base model or rows file that is not there; `details.faults` lists each with what to do: fix the path or export the rows first.',
  SERVER_CONFIG_INVALID:
    'A tool server configuration (setting, .vscode/mcp.json or task) is invalid; the message gives the JSON path: fix it (docs/task-format.md).',
  SERVER_NOT_CONFIGURED:
    'A task names a server configured neither in rehearsal.servers nor in .vscode/mcp.json: add it, or define it in the task.',
  SERVER_START_FAILED:
    'A tool server could not be started or did not finish the MCP handshake: check its command and its stderr.',
  SETTING_INVALID:
    'A rehearsal.* setting holds a number out of its range (or not a number); the message names the setting and the range: fix it in the settings.',
  SNAPSHOT_FAILED:
    "A tool server's snapshot admin tool failed: check the server (docs/task-format.md, admin tools).",
  TASK_INVALID:
    "A task file fails the task schema, is not JSON, or reuses another task's id; the message gives the JSON path: fix the task file.",
  TASK_TOOL_MISSING:
    "A task's allow-list names a tool no server offers: fix the allow-list or add the server.",
  TASK_UNREADABLE: 'A task file or path does not exist or cannot be read: check the path.',
  TOOL_NAME_CONFLICT:
    'Two servers of a task offer the same tool name: remove one server from the task.',
  TRACE_CHANGED:
    'A trace line no longer holds the event the index expected (the file was rewritten): refresh the trace.',
  TRACE_CLOSED: 'An event was written to a closed trace: start a new run to record more events.',
  TRACE_EMPTY: 'A trace to replay has no run event: pass a complete trace.',
  TRACE_NOT_A_FILE: 'A trace path is not a file: pass a trace.jsonl file or a run folder.',
  TRACE_NOT_FOUND:
    'No trace at the given path: pass a trace.jsonl file, a run folder, or a workspace with .rehearsal/runs.',
  TRACE_UNREADABLE: 'A trace file cannot be read: check the path and its permissions.',
  TRACE_WRITE_FAILED:
    'Writing to a trace failed (disk full, permissions); events already written are kept: free space or fix permissions.',
  TRAINER_ENV_MISSING:
    "The trainer's Python environment is not set up, or was made from other pins than this studio's: run `rehearse trainer setup` (the editor: Rehearsal: Set Up Trainer), or name your own Python with --python / rehearsal.trainer.python.",
  TRAINER_ENV_SETUP_FAILED:
    "Making the trainer's Python environment failed (no Python 3.10+, no venv module, pip could not reach its index); the message says which: fix it and run the setup again.",
  TRAINER_EXPORT_FAILED:
    "The trainer could not write an export (`rehearse export --format trl`'s parquet): the message gives the trainer's own code and what to do (`TRAINER_PACKAGES_MISSING`: run `rehearse trainer setup`).",
  TRAINER_PYTHON_MISSING:
    "The Python named for the trainer does not exist: fix --python, rehearsal.trainer.python, the run file's hardware.python or $TRAINER_PYTHON, or drop it to use the studio's environment (`rehearse trainer setup`).",
  UNKNOWN_ANNOTATION:
    'No annotation with that id on the run (it may have been deleted): refresh and try again.',
  UNKNOWN_CALL: 'No call with that id in the trace: list its calls with `rehearse report --calls`.',
  UNKNOWN_EPISODE: 'No episode with that id in the trace: check the id against the trace.',
  USER_FAILED:
    "The task's user simulator failed to give its next message (its endpoint answered an error, its process ended or took too long); the message says which: that episode ends with it and the run goes on.",
  USER_UNREACHABLE:
    "The endpoint that plays a task's user (--user-endpoint) cannot be reached: start the server or fix the base URL; that episode ends with it and the run goes on.",
} as const satisfies Record<string, string>;

/** A stable, machine-readable code of a `StudioError`. */
export type StudioErrorCode = keyof typeof STUDIO_ERROR_CODES;

/** Whether `code` is one of the studio's error codes (for codes that cross a process boundary). */
export function isStudioErrorCode(code: unknown): code is StudioErrorCode {
  return typeof code === 'string' && Object.hasOwn(STUDIO_ERROR_CODES, code);
}
