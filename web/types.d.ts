// Globals the page's scripts use, for the type check (tsc -p web; docs/web.md).
interface Window {
  /** The page's state, for the browser tests and the curious (app.js). */
  highwater: any;
  /** uPlot, loaded as a classic script from vendor/ (chart.js). */
  uPlot: any;
  /** The era comparison's two sides and limit (compare.js), for the browser tests. */
  highwaterCompare: any;
}
