// The Captain's and admins' pages: people and invitations, model
// providers, the approvals inbox, the audit log, the workspace's settings.
import { isAdmin } from "../../state/session";
import type { AdminSection } from "../../state/router";
import { QuickNoteButton } from "../shell/QuickNote";
import { DrawerButton } from "../shell/Shell";
import { Approvals } from "./Approvals";
import { Audit } from "./Audit";
import { People } from "./People";
import { Providers } from "./Providers";
import { WorkspaceSettings } from "./WorkspaceSettings";

const TITLES: Record<AdminSection, string> = {
  people: "People",
  providers: "Model providers",
  approvals: "Approvals",
  audit: "Audit log",
  settings: "Workspace settings",
};

export function AdminView({ section }: { section: AdminSection }) {
  document.title = `${TITLES[section]} · Helm`;
  return (
    <div class="admin">
      <header class="admin-header">
        <DrawerButton />
        <h1>{TITLES[section]}</h1>
        <QuickNoteButton />
      </header>
      <div class="page">
        {!isAdmin.value && section !== "approvals" ? (
          <p class="muted">Only the Captain and admins see this page.</p>
        ) : section === "people" ? (
          <People />
        ) : section === "providers" ? (
          <Providers />
        ) : section === "approvals" ? (
          <Approvals />
        ) : section === "settings" ? (
          <WorkspaceSettings />
        ) : (
          <Audit />
        )}
      </div>
    </div>
  );
}
