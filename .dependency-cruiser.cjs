/**
 * The layer graph of docs/architecture.md, enforced (`npm run lint`): each layer imports only from the layers
 * above it in LAYERS, nothing imports in a circle, and src/ never reaches into infra/, functions/, test/ or bench/.
 * The one documented exception: the CLI ships the lab's demo and emulator (src/cli → lab/).
 */
const LAYERS = [
  ['base', '^src/[^/]+\\.ts$'],
  ['net', '^src/net/'],
  ['kube', '^src/kube/'],
  ['streaming', '^src/streaming/'],
  ['probe', '^src/probe/'],
  ['metrics', '^src/metrics/'],
  ['config', '^src/config/'],
  ['aws', '^src/aws/'],
  ['lambda', '^src/lambda/'],
  ['report', '^src/report/'],
  ['audit', '^src/audit/'],
  ['cli', '^src/cli/'],
  // The package's API (`import … from 'kube-stream-probe'`): the engine without the CLI, beside it at the top.
  ['api', '^src/api/'],
];

const upward = LAYERS.flatMap(([name, path], i) =>
  LAYERS.slice(i + 1).map(([above, abovePath]) => ({
    name: `${name}-not-to-${above}`,
    comment: `src/ layers import only from the layers above them (docs/architecture.md, "Layers"): ${name} may not import ${above}`,
    severity: 'error',
    from: { path },
    to: { path: abovePath },
  })),
);

module.exports = {
  forbidden: [
    { name: 'no-circular', comment: 'no import cycles', severity: 'error', from: {}, to: { circular: true } },
    ...upward,
    {
      name: 'src-not-to-deployment-or-tests',
      comment: 'the engine never imports the CDK app, the entry points, tests or benchmarks',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(infra|functions|test|bench)/' },
    },
    {
      name: 'only-the-cli-ships-the-lab',
      comment: 'the lab (emulator, hops) is test and demo equipment: only the CLI (demo, emulator commands) may import it',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^lab/' },
    },
    {
      name: 'lab-not-to-cli',
      comment: 'the lab serves the CLI, not the other way round',
      severity: 'error',
      from: { path: '^lab/' },
      to: { path: '^src/cli/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
