export * from './jsonPath';
export * from './structuralDiff';
export * from './leaves';
export * from './agreement';
export * from './responseValue';
export * from './scores';
export * from './textDiff';
export * from './compare';
export { canonicalJson, canonicalNumber, compareKeys } from '../base/canonicalJson';
