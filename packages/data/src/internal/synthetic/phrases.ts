/**
 * Turn templates shared by every session, so that distractor sessions share wording with the
 * relevant ones and no phrase gives a session's factor or preference away.
 */

/** First user message: `{task}` is a task phrase that names the factor. */
export const openers: ReadonlyArray<string> = [
  "I need to {task}.",
  "Can you help me {task}?",
  "Could you help me {task}?",
  "I'm trying to {task} and could use a hand.",
  "This week I have to {task}. Where do I start?",
  "Help me {task}, please."
]

export const openerExtras: ReadonlyArray<string> = [
  "It's been on my list for a while.",
  "I'd like to get this done before the weekend.",
  "Last time this took me far too long.",
  "I want to get it right this time.",
  "I've only got an evening for it.",
  "Nothing fancy, I just need something workable."
]

export const intros: ReadonlyArray<string> = [
  "Sure, here's a first pass.",
  "Happy to help. Here's a draft to start from.",
  "Here's one way to approach it.",
  "Good idea to plan this out. Here's a starting point.",
  "Let's work through it. Here's what I'd suggest."
]

/** Assistant content sentences; `{t}` is the session's topic. */
export const body: ReadonlyArray<string> = [
  "Start by getting clear on {t} and what outcome you want.",
  "It helps to note what is already settled before raising {t}.",
  "A short check-in afterwards keeps things from drifting.",
  "Set aside a fixed block of time for this rather than squeezing it in.",
  "Write down the two or three points that matter most.",
  "If something about {t} is unclear, flag it early instead of guessing.",
  "Keep a simple record so you can see what changed.",
  "Mention the constraint you are working with so expectations line up.",
  "Leave some slack for the part that usually takes longer than planned.",
  "Close by confirming who does what next.",
  "Group related items together so nothing gets handled twice.",
  "Decide in advance what a good enough result looks like for {t}.",
  "Ask for input from whoever is most affected by {t}.",
  "Prepare a fallback in case the first plan does not work.",
  "Review it once the next day with fresh eyes before you commit.",
  "Split {t} into the part you control and the part you don't.",
  "Note any deadline that depends on someone else's answer.",
  "Keep the first version rough; polishing comes after the structure works.",
  "Say plainly what you need from the other side and by when.",
  "Collect the facts about {t} in one place before deciding anything.",
  "Think about how this will look a month from now, not just this week.",
  "Check whether anything similar was tried before and what happened.",
  "Pick one measure of progress and keep an eye on it.",
  "Reuse what already works instead of starting from scratch.",
  "Agree on how you will handle changes once things are underway."
]

export const closes: ReadonlyArray<string> = [
  "Perfect, this works.",
  "Great, that's exactly what I needed. Thanks!",
  "This is much better, thank you.",
  "Yes, that's it. Thanks for sticking with it.",
  "Love it. I'll use this.",
  "That does it, thanks."
]

/** Joins two complaints made in one turn. */
export const alsos: ReadonlyArray<string> = ["Also,", "And another thing:", "On top of that,", "Plus,"]
