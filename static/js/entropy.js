// The player's share of a roll's randomness (docs/verification.md, "client seed"): 16 bytes from
// the browser's CSPRNG, sent with every roll request. The server binds it into the faces and
// records it, so it cannot know a roll's faces before the request arrives.
export function clientSeed() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
