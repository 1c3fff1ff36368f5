export * from './types';
export * from './conversation';
export * from './envace';
export * from './chat';
export * from './writeImport';
export * from './envaceRolloutFiles';
export * from './envaceRolloutEpisodes';
export * from './envaceRolloutTrace';
