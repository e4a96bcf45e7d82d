// The web UI's entry: mount the app, then decide the first screen.
import { render } from "preact";
import "./styles/app.css";
import { interceptLinks } from "./state/router";
import { boot } from "./state/session";
import { App } from "./views/App";

const root = document.getElementById("app");
if (root) {
  interceptLinks(root);
  render(<App />, root);
  void boot();
}
