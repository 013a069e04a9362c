// The dice's sound: off until the user turns it on (remembered per browser); made on the spot
// with Web Audio, so there is no file to load and nothing plays before a user gesture allowed it.
const KEY = "tablecheck:dice-sound";
let audio = null;

export function soundOn() {
  try {
    return localStorage.getItem(KEY) === "on";
  } catch {
    return false;
  }
}

export function wireSoundToggle(button) {
  if (!button) return;
  const show = () => button.setAttribute("aria-pressed", String(soundOn()));
  button.addEventListener("click", () => {
    try {
      localStorage.setItem(KEY, soundOn() ? "off" : "on");
    } catch {
      /* the toggle then lasts for this page only */
    }
    show();
    if (soundOn()) rattle(); // a sample, and the gesture that lets the page play sound
  });
  show();
}

// A few short clicks of filtered noise: dice on a table, a third of a second.
export function rattle() {
  if (!soundOn() || !("AudioContext" in window)) return;
  audio ||= new AudioContext();
  if (audio.state === "suspended") audio.resume().catch(() => {});
  const now = audio.currentTime;
  const length = Math.floor(audio.sampleRate * 0.03);
  for (let i = 0; i < 4; i += 1) {
    const buffer = audio.createBuffer(1, length, audio.sampleRate);
    const data = buffer.getChannelData(0);
    for (let k = 0; k < length; k += 1) data[k] = (Math.random() * 2 - 1) * (1 - k / length) ** 3;
    const source = audio.createBufferSource();
    source.buffer = buffer;
    const filter = audio.createBiquadFilter();
    filter.type = "bandpass";
    filter.frequency.value = 1800 + Math.random() * 1600;
    const gain = audio.createGain();
    gain.gain.value = 0.25 * (1 - i * 0.18);
    source.connect(filter).connect(gain).connect(audio.destination);
    source.start(now + i * 0.07 + Math.random() * 0.03);
  }
}
