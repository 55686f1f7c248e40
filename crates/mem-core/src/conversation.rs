//! An ordered list of messages with cached token counts.

use std::cell::Cell;

use chrono::NaiveDate;

use crate::inject::{is_long_term_memory, long_term_memory_message, render_long_term_memory};
use crate::message::{Message, Role};
use crate::tokens::{Encoding, TokenCounter};

/// A conversation: messages in order, each with its token count cached after the first count.
///
/// Mutation goes through methods so the cache stays right: [`Conversation::push`] adds one
/// message and counting the conversation again only counts that message, which keeps a check
/// after every appended message cheap (O(new message), not O(conversation)).
#[derive(Debug, Clone, Default)]
pub struct Conversation {
    messages: Vec<Message>,
    /// Per-message token counts; `None` until counted. Same length as `messages`.
    counts: Vec<Cell<Option<usize>>>,
    /// The encoding the cached counts were made with; counting with another one starts over.
    counted_with: Cell<Option<Encoding>>,
}

impl Conversation {
    /// An empty conversation.
    pub fn new() -> Self {
        Self::default()
    }

    /// A conversation holding `messages` (counts computed lazily).
    pub fn from_messages(messages: Vec<Message>) -> Self {
        let counts = messages.iter().map(|_| Cell::new(None)).collect();
        Conversation {
            messages,
            counts,
            counted_with: Cell::new(None),
        }
    }

    /// The messages, in order.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Consumes the conversation, returning its messages.
    pub fn into_messages(self) -> Vec<Message> {
        self.messages
    }

    /// Number of messages.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// `true` when there are no messages.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// Appends a message.
    pub fn push(&mut self, message: Message) {
        self.messages.push(message);
        self.counts.push(Cell::new(None));
    }

    /// Inserts a message at `index` (panics like `Vec::insert` if `index > len`).
    pub fn insert(&mut self, index: usize, message: Message) {
        self.messages.insert(index, message);
        self.counts.insert(index, Cell::new(None));
    }

    /// Removes and returns the message at `index`.
    pub fn remove(&mut self, index: usize) -> Message {
        self.counts.remove(index);
        self.messages.remove(index)
    }

    /// Mutable access to one message; its cached count is dropped.
    pub fn message_mut(&mut self, index: usize) -> Option<&mut Message> {
        let count = self.counts.get(index)?;
        count.set(None);
        self.messages.get_mut(index)
    }

    /// Keeps only the messages for which `keep` returns `true`.
    pub fn retain(&mut self, mut keep: impl FnMut(&Message) -> bool) {
        let mut kept_counts = Vec::with_capacity(self.counts.len());
        let mut kept = Vec::with_capacity(self.messages.len());
        for (m, c) in self.messages.drain(..).zip(self.counts.drain(..)) {
            if keep(&m) {
                kept.push(m);
                kept_counts.push(c);
            }
        }
        self.messages = kept;
        self.counts = kept_counts;
    }

    /// Tokens of the message at `index`, counted once then cached (per encoding: counting with
    /// a counter of another encoding drops the cache first).
    pub fn message_tokens(&self, counter: &TokenCounter, index: usize) -> usize {
        if self.counted_with.get() != Some(counter.encoding()) {
            for c in &self.counts {
                c.set(None);
            }
            self.counted_with.set(Some(counter.encoding()));
        }
        let Some(cell) = self.counts.get(index) else {
            return 0;
        };
        if let Some(n) = cell.get() {
            return n;
        }
        let n = counter.count_message(&self.messages[index]);
        cell.set(Some(n));
        n
    }

    /// `true` when the message at `index` has a cached count.
    pub fn is_counted(&self, index: usize) -> bool {
        self.counts.get(index).is_some_and(|c| c.get().is_some())
    }

    /// Tokens of the whole conversation; only messages not yet counted are tokenised.
    pub fn total_tokens(&self, counter: &TokenCounter) -> usize {
        (0..self.messages.len())
            .map(|i| self.message_tokens(counter, i))
            .sum()
    }

    /// Puts the seed §6 block ([`render_long_term_memory`]) at the top of the conversation: after
    /// the leading system messages, as a user message. An earlier injected block is removed first,
    /// so repeated injection (after each compaction) never stacks copies.
    pub fn inject_long_term_memory(&mut self, instructions: &str, memories: &str, date: NaiveDate) {
        self.retain(|m| !is_long_term_memory(m));
        let at = self
            .messages
            .iter()
            .take_while(|m| m.role == Role::System)
            .count();
        self.insert(
            at,
            long_term_memory_message(render_long_term_memory(instructions, memories, date)),
        );
    }
}

impl From<Vec<Message>> for Conversation {
    fn from(messages: Vec<Message>) -> Self {
        Conversation::from_messages(messages)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_cached_and_invalidated() {
        let c = TokenCounter::default();
        let mut conv = Conversation::from_messages(vec![
            Message::user("hello world"),
            Message::assistant("hi"),
        ]);
        let total = conv.total_tokens(&c);
        assert_eq!(
            total,
            c.count_message(&conv.messages()[0]) + c.count_message(&conv.messages()[1])
        );
        conv.message_mut(1).unwrap().content =
            vec![crate::ContentBlock::text("a much longer reply than before")];
        assert!(conv.total_tokens(&c) > total);
        assert!(conv.is_counted(0) && conv.is_counted(1));
        conv.push(Message::user("x"));
        assert_eq!(conv.len(), 3);
        assert!(!conv.is_counted(2), "a new message is counted lazily");
        conv.total_tokens(&c);
        assert!(conv.is_counted(2));
        conv.message_mut(0).unwrap();
        assert!(
            !conv.is_counted(0) && conv.is_counted(1),
            "only the changed message is dropped"
        );
    }

    #[test]
    fn the_cache_follows_the_encoding() {
        // Text whose count differs between the two vocabularies.
        let text = "Die Straßenbahn fährt über die Brücke: 東京都の天気 🌧️ — naïve café";
        let o200k = TokenCounter::default();
        let cl100k = TokenCounter::new(Encoding::Cl100kBase);
        assert_ne!(o200k.count(text), cl100k.count(text));
        let conv = Conversation::from_messages(vec![Message::user(text)]);
        assert_eq!(
            conv.total_tokens(&o200k),
            o200k.count_message(&conv.messages()[0])
        );
        assert_eq!(
            conv.total_tokens(&cl100k),
            cl100k.count_message(&conv.messages()[0])
        );
    }

    #[test]
    fn reinjection_replaces_the_block() {
        let d = NaiveDate::from_ymd_opt(2026, 1, 2).unwrap();
        let mut conv = Conversation::from_messages(vec![
            Message::text(Role::System, "sys"),
            Message::user("q"),
        ]);
        conv.inject_long_term_memory("rules", "", d);
        conv.inject_long_term_memory("rules v2", "mem", d);
        let injected: Vec<_> = conv
            .messages()
            .iter()
            .filter(|m| is_long_term_memory(m))
            .collect();
        assert_eq!(injected.len(), 1);
        assert_eq!(conv.messages()[1], *injected[0]);
        assert!(injected[0].text_content().contains("rules v2"));
        assert_eq!(conv.len(), 3);
    }
}
