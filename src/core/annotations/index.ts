export * from './schema';
export * from './validate';
export * from './annotationSet';
export * from './store';
export * from './library';
export * from './suggest';
export * from './tree';
