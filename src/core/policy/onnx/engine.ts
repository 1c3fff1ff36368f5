import * as path from 'node:path';
import { AutoTokenizer, env as transformersEnv } from '@huggingface/transformers';
import type { PreTrainedTokenizer } from '@huggingface/transformers';
import { firstLine } from '../../base/clip';
import { StudioError, errorMessage } from '../../base/errors';
import type { ChatMessage, ToolDefinition } from '../../protocol/types';
import { toFunctionSchema } from '../../protocol/types';
import { batchLimits } from './batchScheduler';
import type { GenerateRequest, GenerateResult, KvCacheMode } from './decoder';
import { OnnxDecoder } from './decoder';
import type { DeviceProbeListener, DeviceReport, DeviceSetting } from './device';
import type { ModelFolderInfo } from './modelFolder';
import { readModelFolder } from './modelFolder';

/**
 * A policy model in the Hugging Face ONNX layout: the tokenizer and chat template through
 * transformers.js, the forward passes through {@link OnnxDecoder} on onnxruntime-node.
 */
export class OnnxEngine {
  private constructor(
    private readonly tokenizer: PreTrainedTokenizer,
    readonly decoder: OnnxDecoder,
    private readonly dir: string,
  ) {}

  /** Loads a model folder on the first device of the setting that works. */
  static async load(
    dir: string,
    setting: DeviceSetting = 'auto',
    threads?: number,
    batch: {
      maxSequences?: number;
      kvCacheMb?: number;
      kvCache?: KvCacheMode;
      onProbe?: DeviceProbeListener;
    } = {},
  ): Promise<OnnxEngine> {
    const info = await readModelFolder(dir);
    transformersEnv.allowRemoteModels = false;
    transformersEnv.allowLocalModels = true;
    transformersEnv.localModelPath = path.dirname(path.resolve(dir)) + path.sep;
    let tokenizer: PreTrainedTokenizer;
    try {
      tokenizer = await AutoTokenizer.from_pretrained(path.basename(path.resolve(dir)));
    } catch (err) {
      throw new StudioError(
        'MODEL_FILE_BROKEN',
        `Cannot load the tokenizer of ${dir} (tokenizer.json, tokenizer_config.json): ${errorMessage(err)}`,
      );
    }
    // Found by the model folder fuzz target: without a template the first prompt failed with
    // transformers.js's own message; say so before anything loads.
    if (!(tokenizer as { chat_template?: unknown }).chat_template) {
      throw new StudioError(
        'MODEL_FILE_BROKEN',
        `The tokenizer of ${dir} has no chat template (tokenizer_config.json "chat_template"); export the model with \`python3 -m trainer export\`, which writes it.`,
      );
    }
    const limits = batchLimits(info, batch.kvCacheMb, batch.maxSequences);
    return new OnnxEngine(
      tokenizer,
      await OnnxDecoder.load(info, setting, threads, {
        limits,
        onProbe: batch.onProbe,
        kvCache: batch.kvCache,
      }),
      dir,
    );
  }

  get info(): ModelFolderInfo {
    return this.decoder.info;
  }

  get device(): DeviceReport {
    return this.decoder.device;
  }

  /** The prompt text of a conversation, through the model's own chat template. */
  renderChat(messages: readonly ChatMessage[], tools: readonly ToolDefinition[]): string {
    const schemas = tools.length ? tools.map(toFunctionSchema) : undefined;
    try {
      // transformers.js types messages as {role, content} and tools as plain records; the chat
      // template reads the other fields too (tool_calls, tool names), so the whole messages go in.
      return this.tokenizer.apply_chat_template(
        messages as unknown as { role: string; content: string }[],
        {
          tools: schemas as unknown as Record<string, unknown>[] | undefined,
          add_generation_prompt: true,
          tokenize: false,
        },
      ) as string;
    } catch (err) {
      throw new StudioError(
        'MODEL_FILE_BROKEN',
        `The chat template of ${this.dir} (tokenizer_config.json) cannot render this conversation: ${firstLine(errorMessage(err))}. Re-export the model.`,
      );
    }
  }

  encode(text: string): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: false });
  }

  decode(ids: number[]): string {
    // transformers.js refuses an empty list; a sample that ended at once (end token first) is empty text.
    return ids.length ? this.tokenizer.decode(ids, { skip_special_tokens: false }) : '';
  }

  /** Generates from token ids, with texts decoded by this model's tokenizer; concurrent calls decode together. */
  generate(req: Omit<GenerateRequest, 'decode' | 'tokenPieces'>): Promise<GenerateResult> {
    return this.decoder.generate({
      ...req,
      decode: (ids) => this.decode(ids),
      tokenPieces: (size) => this.tokenPieces(size),
    });
  }

  private pieces: string[] | undefined;

  /** Each token's text, decoded once per model (the tool-name constraint reads them). */
  private tokenPieces(size: number): readonly string[] {
    if (this.pieces?.length !== size)
      this.pieces = Array.from({ length: size }, (_, id) => this.decode([id]));
    return this.pieces;
  }

  endSession(key: string): void {
    this.decoder.endSession(key);
  }

  dispose(): Promise<void> {
    return this.decoder.dispose();
  }
}
