// Preloaded into the fuzzer and its worker: a seeded Math.random (KSP_FUZZ_SEED), so a run can be repeated.
const seed = Number(process.env.KSP_FUZZ_SEED || 1) >>> 0;
let s = seed || 1;
Math.random = function mulberry32() {
  s = (s + 0x6d2b79f5) >>> 0;
  let t = s;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
