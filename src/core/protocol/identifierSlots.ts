import type { ChatMessage } from './types';

/**
 * Identifier slots (delexicalisation): before a model reads a conversation, every identifier in it
 * (an email, a phone number, an id such as `C442404`, `#W2760537`, `credit_card_5385845` or
 * `6227039837`) is replaced by a placeholder naming its kind and its order of first appearance
 * (`C#1`, `#W#1`, `credit_card#1`, `id#1`, `email#1`); what the model writes is mapped back before
 * it is parsed. A small model then copies an id by writing a short, nearly unique placeholder instead
 * of a dozen digits it would have to find and reproduce token by token. A model folder asks for it in
 * `rehearsal_config.json` (`"identifierSlots": true`); its training rows are exported the same way
 * (`rehearse export --identifier-slots`), so the model trains on exactly what it reads.
 *
 * Numbering is by first appearance, so the placeholders of a conversation's prefix do not change as
 * the conversation grows (the policy host's KV cache of earlier turns stays valid). A placeholder the
 * model writes that names no value of the conversation (a rehearsed response's new id) becomes a new
 * value of the same shape (`C#3` → `C000003`), the same one each time it is written.
 */
export class IdentifierSlots {
  private readonly byValue = new Map<string, string>();
  private readonly byPlaceholder = new Map<string, string>();
  private readonly counts = new Map<string, number>();
  /** A value of each kind, as the shape of new values of that kind. */
  private readonly shapes = new Map<string, string>();

  /** The text with each identifier replaced by its placeholder (new identifiers get the next number). */
  hide(text: string): string {
    return text.replace(IDENTIFIER, (value: string, ...groups: (string | undefined)[]) => {
      const known = this.byValue.get(value);
      if (known) return known;
      const { kind, digits } = identifierKind(value, groups);
      const n = (this.counts.get(kind) ?? 0) + 1;
      this.counts.set(kind, n);
      const placeholder = `${kind}#${n}`;
      this.byValue.set(value, placeholder);
      this.byPlaceholder.set(placeholder, value);
      if (!this.shapes.has(kind)) this.shapes.set(kind, digits);
      return placeholder;
    });
  }

  /** The text with each placeholder replaced by its value; unknown placeholders become new values. */
  reveal(text: string): string {
    return text.replace(PLACEHOLDER, (placeholder: string, kind: string, n: string) => {
      const known = this.byPlaceholder.get(placeholder);
      if (known !== undefined) return known;
      const value = this.newValue(kind, Number(n));
      this.byPlaceholder.set(placeholder, value);
      return value;
    });
  }

  /** The messages with every content hidden, in order (the first appearance decides the numbers). */
  hideMessages(messages: readonly ChatMessage[]): ChatMessage[] {
    return messages.map((m) => ({ ...m, content: this.hide(m.content) }));
  }

  /** A value of `kind` for a placeholder the conversation does not have, shaped like its known values. */
  private newValue(kind: string, n: number): string {
    const number = String(n);
    if (kind === 'email') return `someone${number}@example.invalid`;
    if (kind === 'phone') return `+1-555-000-${number.padStart(4, '0')}`;
    const width = Math.max(this.shapes.get(kind)?.length ?? 7, number.length);
    const digits = number.padStart(width, '0');
    if (kind === 'id') return digits.replace(/^0/, '9');
    return /^[a-z]/.test(kind) ? `${kind}_${digits}` : `${kind}${digits}`;
  }
}

/**
 * What counts as an identifier, in order of precedence: an email, a phone number (`+1-555-123-4567`),
 * lowercase words with a number (`credit_card_5385845`, `priya_chen_7878`), capital letters with a
 * number of four or more digits (`C442404`, `CARD702678`, the `W2760537` of `#W2760537`), and a bare
 * number of seven or more digits. Dates, amounts, zip codes and last-four digits are left as they are:
 * the conversation uses them as numbers, not as keys.
 */
const IDENTIFIER =
  /([A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)|(\+\d{1,3}-\d{3}-\d{3}-\d{4})\b|\b([a-z]+(?:_[a-z]+)*)_(\d{4,})\b|\b([A-Z]{1,5})(\d{4,})\b|\b(\d{7,})\b/g;

/** A placeholder: a kind, `#`, and a number (`C#1`, `credit_card#2`, `email#1`). */
const PLACEHOLDER = /\b(email|phone|id|[A-Z]{1,5}|[a-z]+(?:_[a-z]+)*)#(\d{1,4})\b/g;

/**
 * True when `text` holds an identifier that {@link IdentifierSlots} would number, or a placeholder it
 * would reveal.
 */
export function hasIdentifier(text: string): boolean {
  return new RegExp(IDENTIFIER.source).test(text) || new RegExp(PLACEHOLDER.source).test(text);
}

/**
 * `text` with every identifier and placeholder replaced by `word`, so that it takes no slot number
 * and renumbers nothing it precedes. Replaced until none is left: a replacement can make a new one
 * where it joins its neighbours, and each pass removes digits or an `@` that `word` must not have (so
 * it ends). `word` must be no longer than the shortest match (3 characters: `C#1`) for the text not
 * to grow.
 */
export function withoutIdentifiers(text: string, word = 'ID'): string {
  if (/[\d@]/.test(word))
    throw new Error('withoutIdentifiers: the word may not hold digits or "@"');
  let out = text;
  while (hasIdentifier(out)) out = out.replace(IDENTIFIER, word).replace(PLACEHOLDER, word);
  return out;
}

/** An identifier's kind (the placeholder's name) and its digits (the shape of new values of the kind). */
function identifierKind(
  value: string,
  groups: (string | undefined)[],
): { kind: string; digits: string } {
  const [email, phone, words, wordDigits, letters, letterDigits] = groups;
  if (email !== undefined) return { kind: 'email', digits: '' };
  if (phone !== undefined) return { kind: 'phone', digits: '' };
  if (words !== undefined) return { kind: words, digits: wordDigits ?? '' };
  if (letters !== undefined) return { kind: letters, digits: letterDigits ?? '' };
  return { kind: 'id', digits: value };
}

/**
 * Reveals a stream of generated text as it comes: text is passed on once no placeholder can still be
 * growing at its end (a placeholder is made of word characters and `#`), so a streamed turn shows the
 * same values as the finished one.
 */
export class RevealingStream {
  private text = '';
  private shown = 0;

  constructor(
    private readonly slots: IdentifierSlots,
    private readonly emit: (delta: string) => void,
  ) {}

  push(delta: string): void {
    this.text += delta;
    const stable = this.text.replace(/[\w#]+$/, '');
    this.flushTo(stable);
  }

  /** Passes on the rest (the generation ended). */
  end(): void {
    this.flushTo(this.text);
  }

  private flushTo(prefix: string): void {
    const revealed = this.slots.reveal(prefix);
    if (revealed.length > this.shown) {
      this.emit(revealed.slice(this.shown));
      this.shown = revealed.length;
    }
  }
}
