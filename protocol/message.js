export {};
//# sourceMappingURL=message.js.map
