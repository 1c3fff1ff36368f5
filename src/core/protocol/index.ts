export * from './codes';
export * from './types';
export * from './actParser';
export * from './rehearsalParser';
export * from './rehearsePrompt';
export { stripAsciiWhitespace } from './text';
export { parseStrictJson, isFiniteJson } from './strictJson';
