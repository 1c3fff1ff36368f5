export * from './types';
export * from './conversation';
export * from './envace';
export * from './chat';
export * from './writeImport';
