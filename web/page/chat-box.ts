/**
 * The playground's chat: a list of the person's messages and an input box. A host puts
 * an app's `ui/message` into the box (as Claude Desktop and VS Code do) for the person
 * to send; sending shows the message in the chat and hands it to the agent.
 */

/** Wires the Send button; `onsend` gets each message sent. */
export function setUpChatBox(onsend: (text: string) => void): void {
  document.getElementById("chat-send")!.addEventListener("click", () => {
    const input = document.getElementById("chat-input") as HTMLTextAreaElement;
    const text = input.value.trim();
    if (text === "") return;
    input.value = "";
    const item = document.createElement("li");
    item.textContent = text;
    document.getElementById("chat")!.append(item);
    onsend(text);
  });
}

/** Puts `text` into the chat's input box (replacing what was there) and moves the focus to it. */
export function putInChatBox(text: string): void {
  const input = document.getElementById("chat-input") as HTMLTextAreaElement;
  input.value = text;
  input.focus();
}
