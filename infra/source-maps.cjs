// Keeps the functions' source maps out of their zips, beside them in the package folder
// (`sourcemaps/`), so that the shipped code loads without them and a minified stack trace
// can still be read back: `sluice symbolicate .serverless/sourcemaps < trace.txt`.
// Listed before serverless-esbuild, whose after-hook removes its build folder.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

class SluiceSourceMaps {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = { 'after:package:createDeploymentArtifacts': () => this.keepMaps() };
  }

  keepMaps() {
    const esbuild = this.serverless.pluginManager.plugins.find((plugin) => plugin.constructor.name === 'EsbuildServerlessPlugin');
    const built = path.join(esbuild.buildDirPath, 'functions');
    // The framework moves .serverless to the --package folder, if one is given, at its end.
    const target = path.join(this.serverless.serviceDir, '.serverless', 'sourcemaps', 'functions');
    fs.mkdirSync(target, { recursive: true });
    for (const file of fs.readdirSync(built).filter((name) => name.endsWith('.map'))) fs.copyFileSync(path.join(built, file), path.join(target, file));
  }
}

module.exports = SluiceSourceMaps;
