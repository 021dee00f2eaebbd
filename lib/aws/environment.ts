/** A required environment variable, or an error that names it and says what it holds. */
export function requiredEnvironment(name: string, what: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name];
  if (!value) throw new Error(`${name} is not set: ${what}`);
  return value;
}
