export * from './taskFile';
export * from './loader';
export * from './generator';
export * from './taskEnvironment';
export * from './referencePlayer';
export * from './checks';
export * from './import';
