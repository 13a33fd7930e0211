/**
 * The one rule for which errors reach the caller (the model or the app, as the text of
 * a tool error): an error whose message is written for the caller extends
 * {@link CallerError}, and is shown as it is. Anything else is an internal error: its
 * stack goes to stderr, and the caller gets a generic message.
 */
/**
 * An error whose message says what was wrong and what to do, written for whoever made
 * the call. Subclasses set `name`; a new subclass is shown to callers by being one.
 */
export declare class CallerError extends Error {}
