import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.sluice/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Keyed state is stored as plain JSON records (it is checkpointed), whose entries are deleted by key.
      '@typescript-eslint/no-dynamic-delete': 'off',
    },
  },
  {
    // The project `sluice init` writes has its own tsconfig.json, without this repository's
    // paths to the sources that `sluice` stands for: its files are linted with the root's.
    files: ['templates/**/*.ts'],
    languageOptions: { parserOptions: { projectService: false, project: './tsconfig.json', tsconfigRootDir: import.meta.dirname } },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, globals: { process: 'readonly' } },
  },
  {
    // The serverless CLI loads infra/serverless.cjs with require().
    files: ['**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'commonjs',
      globals: { process: 'readonly', require: 'readonly', module: 'writable', __dirname: 'readonly' },
    },
    rules: { ...tseslint.configs.disableTypeChecked.rules, '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // kafkajs is an implementation detail of lib/kafka (DESIGN.md): nothing else imports it.
    files: ['**/*.ts'],
    // Tests may check Sluice's output with kafkajs's own consumer, an independent reader; the
    // benchmark's hand-written kafkajs pipelines are kafkajs by definition.
    ignores: ['lib/kafka/**', 'test/**', 'bench/contenders/kafkajs-*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['kafkajs', 'kafkajs/*'], message: 'Only lib/kafka touches kafkajs; use lib/kafka.' }] },
      ],
    },
  },
);
