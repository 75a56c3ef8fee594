// Which engine host the page runs on, from config.json (docs/shipping.md):
//   - `highwater serve` answers {"server": true, "inPageEngine": …}. A binary built without
//     `make wasm` (plain `go install`) has no in-page engine: the page then runs on the server's
//     engine by itself and says so in one line.
//   - The static build (`make dist`) carries {"server": false}; a host where config.json is
//     missing or is something else (an HTML fallback page) counts as static too. There is no
//     websocket to reach, so the backend switch is hidden.
// ?backend=native still asks for the server explicitly (and the page says so if none answers).

export const NO_IN_PAGE_ENGINE = "Running on the server's engine: this build has no in-page engine (build it with make).";

// readConfig fetches config.json next to the page: {server, inPageEngine}.
export async function readConfig(url = "config.json") {
  try {
    const resp = await fetch(url, { cache: "no-cache" });
    if (!resp.ok) return { server: false, inPageEngine: true };
    const cfg = await resp.json();
    return { server: cfg?.server === true, inPageEngine: cfg?.inPageEngine !== false };
  } catch {
    return { server: false, inPageEngine: true };
  }
}

// chooseBackend: {native, note} for this host and the page's URL.
export function chooseBackend(cfg, search = location.search) {
  const asked = new URLSearchParams(search).get("backend");
  if (asked === "native") return { native: true, note: "" };
  if (asked !== "wasm" && cfg.server && !cfg.inPageEngine) return { native: true, note: NO_IN_PAGE_ENGINE };
  return { native: false, note: "" };
}

// showBackend fits the header's backend switch to what the host offers and shows the note, if
// any, under the status line.
export function showBackend(select, cfg, choice) {
  select.value = choice.native ? "native" : "wasm";
  if (!cfg.server && !choice.native) {
    const label = select.closest("label") || select;
    label.hidden = true;
    label.style.display = "none";
  }
  const inPage = select.querySelector('option[value="wasm"]');
  if (cfg.server && !cfg.inPageEngine && inPage) {
    inPage.disabled = true;
    inPage.textContent += " (not in this build)";
  }
  if (choice.note) {
    const note = document.createElement("p");
    note.id = "backend-note";
    Object.assign(note.style, { margin: "0", fontSize: ".85rem", flexBasis: "100%" }); // as #status
    note.setAttribute("role", "note");
    note.textContent = choice.note;
    document.getElementById("status").after(note);
  }
  document.body.dataset.backend = choice.native ? "native" : "wasm";
}
