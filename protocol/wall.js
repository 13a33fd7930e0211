/**
 * The wall: the agent's status for every app of its host session, shown until `until`.
 * It is not queued: every `poll_ui_messages` result carries it, and the status line
 * shows it.
 */
export {};
//# sourceMappingURL=wall.js.map
