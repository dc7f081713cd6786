// Word lists of the synthetic generator: the first and last names given to people factors, and per
// factor kind the task phrases and topics of its sessions.
import type { FactorKind, KindBank } from "./factors.js"

/** More first names than a persona can have people (7 categories x 4 roles), so a draw always finds a free one. */
export const firstNames: ReadonlyArray<string> = [
  "Priya",
  "Marco",
  "Dana",
  "Tomás",
  "Aisha",
  "Kenji",
  "Lena",
  "Omar",
  "Grace",
  "Mateo",
  "Nadia",
  "Felix",
  "Ruth",
  "Jonah",
  "Mei",
  "Samuel",
  "Ines",
  "Viktor",
  "Hana",
  "Diego",
  "Clara",
  "Kwame",
  "Sofia",
  "Elliot",
  "Yusuf",
  "Leila",
  "Anton",
  "Beatriz",
  "Rohan",
  "Freya",
  "Malik",
  "Josephine",
  "Emeka",
  "Ingrid"
]

export const lastNames: ReadonlyArray<string> = [
  "Raman",
  "Ruiz",
  "Whitfield",
  "Okafor",
  "Brennan",
  "Tanaka",
  "Lindqvist",
  "Haddad",
  "Moreau",
  "Castillo",
  "Novak",
  "Osei",
  "Fischer",
  "Kowalski",
  "Chen",
  "Abbott",
  "Duarte",
  "Petrov",
  "Sato",
  "Morales",
  "Keller",
  "Mensah",
  "Ricci",
  "Walsh"
]

export const kindBanks: Readonly<Record<FactorKind, KindBank>> = {
  person: {
    tasks: [
      "write a message to {f} about {t}",
      "prepare for a conversation with {f} about {t}",
      "put together notes for my meeting with {f} on {t}",
      "reply to {f}, who asked me about {t}",
      "plan how to bring up {t} with {f}"
    ],
    topics: [
      "the project timeline slipping",
      "splitting up the workload",
      "a budget request",
      "next month's schedule",
      "feedback on a recent draft",
      "a mistake I made last week",
      "taking some time off",
      "a new idea I want to pitch"
    ]
  },
  tool: {
    tasks: [
      "set up {f} for {t}",
      "figure out how to use {f} for {t}",
      "troubleshoot {f}, which keeps acting up during {t}",
      "get more out of {f} for {t}",
      "choose the right settings on {f} for {t}"
    ],
    topics: [
      "a weekend project",
      "everyday use",
      "an upcoming trip",
      "working from home",
      "sharing with my family",
      "a tight budget",
      "long sessions",
      "getting started"
    ]
  },
  organization: {
    tasks: [
      "draft an announcement for {f} about {t}",
      "write a proposal to {f} about {t}",
      "plan a meeting with {f} about {t}",
      "put together an update for {f} on {t}",
      "respond to a request from {f} about {t}"
    ],
    topics: [
      "the spring fundraiser",
      "recruiting new volunteers",
      "a schedule change",
      "this year's budget",
      "a partnership idea",
      "last quarter's results",
      "a complaint we received",
      "the upcoming deadline"
    ]
  },
  artifact: {
    tasks: [
      "revise {f}, especially {t}",
      "get feedback on {f}, mainly {t}",
      "restructure {f} around {t}",
      "write the part of {f} that covers {t}",
      "tighten up {f}, starting with {t}"
    ],
    topics: [
      "the introduction",
      "the part about methods",
      "the conclusion",
      "the summary at the top",
      "the section on costs",
      "the timeline section",
      "the opening paragraph",
      "the list of recommendations"
    ]
  },
  place: {
    tasks: [
      "plan a weekend at {f} around {t}",
      "organize {f} for {t}",
      "sort out {t} at {f}",
      "make a plan for {f} covering {t}",
      "get {f} ready for {t}"
    ],
    topics: [
      "guests coming over",
      "the change of season",
      "a tight budget",
      "storage space",
      "a long stay",
      "some repairs",
      "a small party",
      "the cleaning routine"
    ]
  },
  activity: {
    tasks: [
      "make a plan for {f} that fits {t}",
      "get past a plateau in {f}, mostly around {t}",
      "build a routine for {f} around {t}",
      "figure out what to focus on next in {f}, given {t}",
      "track my progress in {f} with {t} in mind"
    ],
    topics: [
      "a busy work schedule",
      "a minor injury",
      "limited equipment",
      "a goal three months out",
      "motivation dipping",
      "only weekends free",
      "a new coach",
      "last month's slow progress"
    ]
  },
  event: {
    tasks: [
      "plan the details of {f}, starting with {t}",
      "write something to send out for {f} about {t}",
      "prepare for {f}, especially {t}",
      "sort out {t} for {f}",
      "put together a checklist for {f} covering {t}"
    ],
    topics: [
      "the guest list",
      "the budget",
      "the schedule for the day",
      "the invitations",
      "a speech",
      "travel and lodging",
      "food and drinks",
      "what could go wrong"
    ]
  },
  media: {
    tasks: [
      "outline the next installment of {f} about {t}",
      "write a short description for {f} about {t}",
      "brainstorm ideas for {f} around {t}",
      "answer audience feedback on {f} about {t}",
      "plan the next month of {f} around {t}"
    ],
    topics: [
      "a guest interview",
      "audience questions",
      "a recent controversy",
      "a behind-the-scenes look",
      "a beginner's guide",
      "a season wrap-up",
      "a collaboration",
      "a reader's story"
    ]
  }
}
