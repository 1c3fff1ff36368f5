import { firstLine } from '../../base/clip';
import { StudioError, errorMessage } from '../../base/errors';
import type { ModelFolderInfo } from './modelFolder';

/** Bounds on what decodes at once, and on the KV cache the host holds. */
export interface BatchLimits {
  /** Most sequences (samples of every request in flight) decoding at once. */
  maxSequences: number;
  /**
   * Most tokens of KV cache: what requests in flight may grow to (prompt plus max tokens a row, the
   * shared batch's left padding included) plus the idle sessions' caches.
   */
  maxCachedTokens: number;
}

/** Default bound on the sequences decoding at once. */
export const DEFAULT_MAX_SEQUENCES = 64;
/** Default bound on the KV cache, in MiB (1 GiB: 512k tokens of the default policy). */
export const DEFAULT_KV_CACHE_MB = 1024;

/** Bytes of keys and values one cached token takes (float32, every layer). */
export function kvBytesPerToken(info: ModelFolderInfo): number {
  return info.numLayers * 2 * info.numKeyValueHeads * info.headDim * 4;
}

/** The limits for a model: `kvCacheMb` of cache in tokens of this model, and `maxSequences`. */
export function batchLimits(
  info: ModelFolderInfo,
  kvCacheMb = DEFAULT_KV_CACHE_MB,
  maxSequences = DEFAULT_MAX_SEQUENCES,
): BatchLimits {
  return {
    maxSequences,
    maxCachedTokens: Math.floor((kvCacheMb * 1024 * 1024) / kvBytesPerToken(info)),
  };
}

/** Counters of the decode passes since the scheduler started. */
export interface BatchStats {
  /** Forward passes after prefills (a pass that decodes several requests counts once). */
  decodePasses: number;
  /** Sequences summed over those passes (decodeRows / decodePasses is the mean batch). */
  decodeRows: number;
  /** The most sequences one pass decoded. */
  largestBatch: number;
  /** Prefill passes (a chunk of one prompt, or of several in one pass, counts once). */
  prefillPasses: number;
  /** Prompt tokens those passes encoded. */
  prefillTokens: number;
  /** Time inside the graph's forward passes: prefills, and decode passes. */
  prefillForwardMs: number;
  decodeForwardMs: number;
}

/** Counters at zero. */
export function emptyBatchStats(): BatchStats {
  return {
    decodePasses: 0,
    decodeRows: 0,
    largestBatch: 0,
    prefillPasses: 0,
    prefillTokens: 0,
    prefillForwardMs: 0,
    decodeForwardMs: 0,
  };
}

/** An onnxruntime failure as the coded error of every request it ends. */
export function decodeFailure(err: unknown, what: string): StudioError {
  if (err instanceof StudioError) return err;
  return new StudioError(
    'POLICY_DECODE_FAILED',
    `onnxruntime failed in ${what} (${firstLine(errorMessage(err))}); the requests it held failed, others go on. Retry; if it recurs, run fewer episodes at once or use a smaller model.`,
  );
}
