export * from './transcript';
export * from './matchers';
export * from './answerText';
export * from './ruleChecks';
export * from './judge';
export * from './grade';
export * from './envaceReward';
