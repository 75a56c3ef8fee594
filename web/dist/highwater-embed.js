// <highwater-embed>: a Highwater scenario in any page, loaded with one script tag (no build step):
//
//   <script src="https://example.org/highwater/highwater-embed.js"></script>
//   <highwater-embed preset="kill-the-leader.json" autoplay tour controls="minimal"></highwater-embed>
//
// The element makes an iframe of the embed page (index.html?embed=1, next to this script) with
// its attributes as the URL's parameters, fills its container (or height="px"), has play(),
// pause(), seek(t), step() and continue(), and re-dispatches the page's messages as DOM events:
// "highwater-ready", "highwater-step", "highwater-caption", "highwater-violation" (detail: the
// message). docs/web.md lists the attributes.
(() => {
  if (customElements.get("highwater-embed")) return;
  // The page lives next to this script (document.currentScript is set while a classic script runs).
  const script = /** @type {HTMLScriptElement | null} */ (document.currentScript);
  const base = new URL(".", script && script.src ? script.src : location.href);

  // attribute → URL parameter; boolean attributes become 1 (present) or 0 (absent).
  const VALUES = { preset: "preset", scenario: "scenario", seed: "seed", step: "step", speed: "speed", controls: "controls", "caption-delay": "captionDelay", flight: "flight" };
  const FLAGS = { autoplay: "autoplay", tour: "tour", projector: "projector" };

  class HighwaterEmbed extends HTMLElement {
    static get observedAttributes() { return [...Object.keys(VALUES), ...Object.keys(FLAGS), "height", "title"]; }

    constructor() {
      super();
      const root = this.attachShadow({ mode: "open" });
      const style = document.createElement("style");
      // Block-level, the container's width; its own height, or the container's, at least 320 px.
      style.textContent = ":host { display: block; width: 100%; height: var(--highwater-height, 100%); min-height: 320px; }" +
        "iframe { display: block; width: 100%; height: 100%; border: 1px solid #c9ccd1; border-radius: 6px; box-sizing: border-box; }";
      this.frame = document.createElement("iframe");
      this.frame.setAttribute("loading", "lazy");
      this.frame.setAttribute("allow", "clipboard-write");
      root.append(style, this.frame);
      this.onMessage = (/** @type {MessageEvent} */ e) => {
        if (e.source !== this.frame.contentWindow || !e.data || e.data.source !== "highwater" || typeof e.data.type !== "string") return;
        this.dispatchEvent(new CustomEvent("highwater-" + e.data.type, { detail: e.data, bubbles: true, composed: true }));
      };
    }

    connectedCallback() {
      window.addEventListener("message", this.onMessage);
      this.update();
    }

    disconnectedCallback() { window.removeEventListener("message", this.onMessage); }

    attributeChangedCallback() { if (this.isConnected) this.update(); }

    /** src is the embed page's URL for the current attributes. */
    get src() {
      const u = new URL("index.html", base);
      u.searchParams.set("embed", "1");
      for (const [attr, param] of Object.entries(VALUES)) {
        const v = this.getAttribute(attr);
        if (v !== null && v !== "") u.searchParams.set(param, v);
      }
      for (const [attr, param] of Object.entries(FLAGS)) {
        const v = this.getAttribute(attr);
        u.searchParams.set(param, v !== null && v !== "0" && v !== "false" ? "1" : "0");
      }
      return u.href;
    }

    update() {
      const h = this.getAttribute("height");
      if (h && /^\d+$/.test(h)) this.style.setProperty("--highwater-height", h + "px"); else this.style.removeProperty("--highwater-height");
      this.frame.title = this.getAttribute("title") || `Highwater: ${this.getAttribute("preset") || this.getAttribute("scenario") || "Kafka replication"}`;
      const src = this.src;
      if (this.frame.src !== src) this.frame.src = src;
    }

    /** @param {object} msg */
    send(msg) { if (this.frame.contentWindow) this.frame.contentWindow.postMessage(msg, base.origin); }
    play() { this.send({ op: "play" }); }
    pause() { this.send({ op: "pause" }); }
    step() { this.send({ op: "step" }); }
    continue() { this.send({ op: "continue" }); }
    /** @param {number | {step: number}} to a simulated time in ms, or {step: N} for the scenario's step N */
    seek(to) { this.send(typeof to === "number" ? { op: "seek", t: to } : { op: "seek", step: to.step }); }
  }
  customElements.define("highwater-embed", HighwaterEmbed);
})();
