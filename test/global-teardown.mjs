export default async function globalTeardown() {
  await globalThis.__emulators?.stop();
}
