// transformers.js requires `sharp` when it loads, for image processing the policy host never does;
// this stand-in keeps the bundle free of sharp's native libvips. Using it says so instead of failing oddly.
module.exports = function sharp() {
  throw new Error('Image processing is not available in the Rehearsal Studio policy host.');
};
