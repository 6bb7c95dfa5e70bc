import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/paths';

const POM = path.join(PROJECT_ROOT, 'test', 'temporal-test-server', 'pom.xml');
const CACHE_DIR = path.join(PROJECT_ROOT, 'node_modules', '.cache', 'temporal-test-server');
const MAIN_CLASS = 'io.temporal.testserver.TestServer';
// Startup dominates a test server's life here: the client compiler only, a small serial heap.
const JVM_OPTIONS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-Xmx256m'];

/**
 * The Temporal time-skipping test server as an executable taking the SDK's arguments (the port first). The SDK
 * downloads it from the internet; this resolves the same server, published by Temporal on Maven Central, with
 * Maven into ~/.m2 once, and writes a launcher with its classpath under node_modules/.cache (keyed by the pom, so
 * a new version resolves anew). Later calls only check that the jars are still there.
 */
export function provisionTemporalTestServer(): string {
  const pom = readFileSync(POM);
  const dir = path.join(CACHE_DIR, createHash('sha256').update(pom).update(JVM_OPTIONS.join(' ')).digest('hex').slice(0, 16));
  const launcher = path.join(dir, 'temporal-test-server');
  const classpathFile = path.join(dir, 'classpath.txt');
  if (existsSync(launcher) && readFileSync(classpathFile, 'utf8').split(path.delimiter).every((jar) => existsSync(jar))) return launcher;

  requireCommand('java', ['-version'], 'Java 8 or later (e.g. apt-get install openjdk-17-jre-headless)');
  requireCommand('mvn', ['-v'], 'Maven (e.g. apt-get install maven)');
  mkdirSync(dir, { recursive: true });
  const resolved = path.join(dir, `classpath.${process.pid}.txt`);
  try {
    execFileSync('mvn', ['-q', '-B', '-f', POM, 'dependency:build-classpath', `-Dmdep.outputFile=${resolved}`, '-Dstyle.color=never'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`Could not resolve the Temporal test server from Maven Central (${POM}):\n${stdout ?? ''}${stderr ?? ''}`, { cause: error });
  }
  const classpath = readFileSync(resolved, 'utf8').trim();
  rmSync(resolved);
  const script = `#!/bin/sh\n# Written by test/helpers/temporal-test-server.ts.\nexec java ${JVM_OPTIONS.join(' ')} -cp '${classpath}' ${MAIN_CLASS} "$@"\n`;
  // Renamed into place: test files provisioning at once never see half a file.
  const scriptTmp = `${launcher}.${process.pid}`;
  writeFileSync(scriptTmp, script);
  chmodSync(scriptTmp, 0o755);
  writeFileSync(`${classpathFile}.${process.pid}`, classpath);
  renameSync(`${classpathFile}.${process.pid}`, classpathFile);
  renameSync(scriptTmp, launcher);
  return launcher;
}

function requireCommand(command: string, args: string[], what: string): void {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
  } catch {
    throw new Error(`The workflow tests (test/workflows) run the Temporal test server, which needs ${what}: "${command}" was not found on PATH`);
  }
}
