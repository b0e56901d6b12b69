"""The screen's rules: patterns over normalised text, grouped by the rule they enforce."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from re import _constants as _sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

from memory_plugin.safety.superset import Literals, Sieve, form_ends, literals, sieve


@dataclass(frozen=True)
class Rule:
    """A named rule, how a refusal reads, and the patterns (over normalised text) that break it."""

    name: str
    refusal: str
    patterns: tuple[re.Pattern[str], ...]

    def matches(self, text: str) -> bool:
        """Whether any pattern of the rule matches the text."""
        return any(pattern.search(text) for pattern in self.patterns)


def _compile(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.MULTILINE | re.DOTALL) for p in patterns)


_EARLIER = (
    r"(previous|prior|earlier|above|preceding|foregoing|original|initial|old|former|existing"
    r"|system|safety|developer|default|current|other|all|any|every|these|those|your|my|the)"
)
_ORDERS = (
    r"(instructions?|prompts?|directions?|directives?|guidelines?|guidance|commands?|orders"
    r"|programming|constraints|restrictions|guardrails|policies|rules|context|training"
    r"|system ?prompt|system ?message|messages)"
)
_DROP = (
    r"(ignore|disregard|forget|override|overrule|bypass|skip|discard|abandon|neglect|overlook"
    r"|set aside|throw out|throw away|pay no (attention|heed|mind) to|do ?n[o']t (follow|obey)"
    r"|do not (follow|obey)|stop (following|obeying)|no longer (follow|obey)|drop|erase|wipe"
    r"|clear|reset|scrap|nullify|cancel|delete|remove|suspend|lift|turn off|disable)"
)
_SECRET_THINGS = (
    r"(api[ _-]?keys?|access ?keys?|secret ?keys?|keys|tokens?|secrets?|credentials?|passwords?"
    r"|passwd|passphrases?|\.env\b|env(ironment)? ?(vars?|variables)|\.netrc|\.pgpass|\.npmrc"
    r"|\.pypirc|\.git-credentials|aws[/ ]credentials|\.aws|id_rsa|id_ed25519|ssh ?keys?"
    r"|private ?keys?|cookies?|session ?(ids?|tokens?)|(the |this |our |whole |entire |full )*"
    r"(conversation|chat|dialog(ue)?|transcript|chat history|history|system prompt)"
    r"|(the |this |our |whole |entire |full )+messages"
    r"|(every|each|all( the)?|any) (messages?|conversations?|chats?|prompts?|inputs?|replies|"
    r"questions|answers|requests?)|everything the user|what the user (writes|says|types)"
    r"|user ?data|personal data|\$[a-z_]*(key|token|secret|pass)[a-z_]*)"
)
_SEND = (
    r"(send|sends|post|upload|forward|exfiltrate|transmit|e-?mail|leak|copy|submit|paste|pipe"
    r"|beacon|ship|report|push|sync|mirror|dump|relay|attach|share|deliver|export)"
)
_DEST = (
    r"(https?:|hxxps?:|www\.|ftp:|\burl\b|\bwebhook|\bendpoint|\bserver\b|pastebin|requestbin"
    r"|ngrok|\bdiscord|telegram|attacker|external|remote"
    r"|(?<![a-z0-9-])[a-z0-9-]{1,63}\.(com|net|org|io|xyz|ru|cn|tk|top|site|info|biz|cc|me|app|dev"
    r"|example)\b|@[a-z0-9-]{1,63}\.|(?<!\d)\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})"
)
_CUE = (
    r"(^|[.!?;:\-–—]\s*|\b(please|always|silently|secretly|quietly|covertly|automatically|then"  # noqa: RUF001
    r"|and|also|first|immediately|whenever[^.]{0,60}?,?|every ?time[^.]{0,60}?,?|each time[^.]"
    r"{0,60}?,?|you (must|should|will|need to|have to|shall)|remember to|make sure (to|you)"
    r"|be sure to|don'?t forget to|do not forget to|your (task|job) is to|i want you to)\s+)"
)
_SHELL_FILES = (
    r"(authorized_keys|\.bashrc|\.bash_profile|\.zshrc|\.zprofile|\.profile\b|\.bash_login"
    r"|\.config/fish|/etc/profile|/etc/cron|crontab|/etc/rc\.local|/etc/sudoers|/etc/passwd"
    r"|/etc/shadow|\.ssh/|systemd/system|launchagents|launchdaemons|startup folder|run ?once"
    r"|registry run key|\\run\b)"
)
_SHELLS = (
    r"(sudo\s+)?(ba|z|k|da|fi|c|tc)?sh\b|python[0-9.]*\b|perl\b|ruby\b|node\b|iex\b|pwsh\b"
    r"|powershell\b"
)
_FETCHERS = r"(curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod|aria2c|http(ie)?\b)"
_EXECUTE = (
    r"(run|execute|exec|eval|evaluate|follow|obey|carry out|perform|do|apply|implement|act on)"
)
_HANDED_ROLE = (
    r"(the |an? |our |my )?(owner|co-?owner|lead|dri|point of contact|contact|approver|reviewer"
    r"|backup|maintainer|manager|mentor|buddy|admin(istrator)? (of|for|on)|in charge|"
    r"responsible|accountable|on[- ]?call|part of|a member|members?|assigned|signed up"
    r"|on (the |our )?([\w-]+ )?(rota|rotation|team|duty|point|hook))\b"
)
"""What a colleague is made, after "you are now": a role in a team, not a model's persona."""
_MODEL_ADDRESSEE = (
    r"(ai( agent| assistant| model| system)?|llm|chatbot|language model|chatgpt|"
    r"gpt-?[0-9][\w.]*|copilot|llama|mistral|gemini|grok|deepseek|qwen|(ai |llm )?agent)"
)
"""What a planted task calls the model it addresses: what it is, or a model's name that is no
person's (Claude is both, and a colleague called Claude is greeted in team notes)."""
_ASKED_TO_ACT = (
    r"(please\s+)?(send|forward|transfer|wire|pay|delete|remove|e-?mail|book|charge|update|"
    r"change|print|repeat|reveal|output|tell|close|approve|reply|ignore|forget|disregard)\b"
    r"|[^.\n]{0,80}\b(wants you to|(asked|told|authori[sz]ed|allowed|cleared|permitted|"
    r"instructed) (me to (tell|ask) )?you\b|you (must|should|need to|have to|are to|are (now )?"
    r"(authori[sz]ed|allowed|cleared|permitted)))"
    r"|[^.\n]{0,80}(\bplease|\bthen|\balso|;|,)\s+(also\s+)?(send|forward|transfer|wire|pay|"
    r"delete|update|change|print|reveal|e-?mail|book|charge|tell|reply|approve|close)\b"
)
"""A task right after the address, a "you" asked or cleared to act, or a task later in the
sentence, after "please", "then", "also" or a comma."""
_IN_DOCS = (
    r"\s+(in|on|from)\s+(the\s+|our\s+)?([\w-]+\s+){0,2}(wiki|runbook|readme|handbook|"
    r"confluence|notion|intranet|playbook|manual|binder|onboarding (doc|guide|page))\b"
)
"""Where instructions a team replaces live: its own documents, which it tells people to ignore."""

_OURS = (
    r"(you|your|yours|me|this|these|here|now|all|any|every|each|((file|network|internet|"
    r"web|tool|system|data|database|admin|root) )?access|browsing|content|outputs?|answers?|"
    r"responses?|replies|what|how|which|(user|personal|customer) data|safety|ethics|"
    r"moderation|the (system|developers?|users?|assistant|model|ai|prompts?|conversation|chat|"
    r"above|operator|admins?|next|following|rest|context|session|start|beginning|top|bottom|"
    r"end|original|previous|earlier|contrary))\b"
)
"""What instructions are about, after "in", "for", "from" ...: the model, its prompt, its
answers and access, this text."""
_ELSEWHERE = (
    r"\s+(in|on|for|from|to|about|of|at|printed|posted|under|inside|within|regarding|during|"
    rf"while|when|after|before|until)\s+"
    rf"(?!{_OURS})|\s+(videos?|files?|tables?|pages?|docs?|documents?|sheets?|modules?|courses?"
    r"|sessions?|materials?|records?|entries|rows|columns?|fields?|templates?|folders?|"
    r"director(y|ies)|cache|logs?|sections?|repos?|lists?|binders?|manuals?|books?|decks?|"
    r"pdfs?|v\d[\w.]*)\b"
    r"|\s+(that|which)\s+(?![^.;\n]{0,40}\b(you|your|yours|i|me|my|this|these|given|told|set|"
    r"above|before|earlier|system|developers?|prompts?|model|ai|assistant)\b)"
)
"""What places rules or orders outside the model: a firewall's, a warehouse's, a course's
("the firewall rules for port 22", "the directions to the warehouse", "the training videos"),
or a clause about them that names neither the model nor who gave them ("the orders that are
still pending")."""
_ITS_KIND = (
    rf"({_EARLIER}|usual|normal|standard|usage|operating|core|base|basic|hidden|secret|internal"
    r"|given|and|or|of|one|following|said|stupid|silly|annoying|boring|restrictive|pesky|"
    r"built-in|programmed|bot|openai|anthropic|(developer|operator|admin|system|assistant|model|"
    r"ai|creator|owner|maker|programmer|trainer)s?(['\u2019]s|s')?|prompt|chat|conversation|"
    r"behaviou?r(al)?|response|output|new|[\w-]*(polic|safe|content|filter|guard|ethic|moderat)"
    r"[\w-]*|\d+|[,&-]+)"
)
"""The word before orders that are a model's: which ones, or of what kind ("your previous
system instructions", "the usual content rules"); another noun there names what they are
about ("the old password rules", "their previous shipping instructions")."""
_OBJECT_GAP = r"((?!\b(before|after|until|once|while|when|during)\b)[^.;\n]){0,40}?"
"""What may stand between the drop and the orders: not a clause of time, after which "the
training" is another act's ("reset her password before the security training")."""


def _about(prepositions: str, ours: str) -> str:
    """A lookahead body for orders about something else: up to two words, then a
    preposition of topic, then anything but the model, its prompt or this text (`ours`)."""
    return rf"[\w'-]*(\s+[\w'\"«»„“”-]+){{0,2}}?\s+({prepositions})\s+(?!({ours})\b)"


_ABOUT_DE = _about(
    r"zu[rm]?|für|über|bei|beim|im|vom|von|des|der",
    r"dich|dir|euch|sie|ihnen|ki|die ki|de[nm] (assistenten|bot)|das modell|systems?|"
    r"das system|den chat|diese[nmrs]?|oben|vorher|alle[ns]?|jede[nmrs]?|entwickler\w*|"
    r"betreiber\w*|(be)?nutzer\w*|sicherheit|dein\w*|ihr\w*",
)
_ABOUT_FR = _about(
    r"pour|sur|concernant|relatives?|à propos|de|du|des|d'",
    r"toi|vous|tes|vos|ton|ta|votre|l'ia|l'assistant|le modèle|ce|cet|cette|ces|la "
    r"conversation|le système|système|l'utilisat\w*|l'opérateur|développeurs?|ci-dessus|avant|"
    r"plus haut|sécurité|éthique|modération|contenu|confidentialité|toutes?|tous",
)
_ABOUT_ES = _about(
    r"sobre|acerca|para|respecto|relativas?|de|del|de la|de las|de los",
    r"ti|usted|ustedes|tu|tus|su|sus|el sistema|sistema|seguridad|ética|moderación|contenido|"
    r"la ia|el asistente|el modelo|esta|este|estas|estos|esto|la conversación|el chat|arriba|"
    r"antes|desarrolladore?s?|los desarrolladores|el desarrollador|el usuario|usuarios?|el "
    r"operador|privacidad|confidencialidad|todas?|todos?",
)
_ABOUT_PT = _about(
    r"sobre|acerca|para|relativas?|de|do|da|dos|das",
    r"você|voce|ti|te|seu|sua|seus|suas|teu|tua|o sistema|sistema|segurança|ética|moderação|"
    r"conteúdo|a ia|o assistente|o modelo|esta|este|isto|esse|essa|a conversa|o chat|acima|"
    r"antes|desenvolvedor(es)?|o desenvolvedor|usuários?|o usuário|operador|privacidade|"
    r"confidencialidade|todas?|todos?",
)
_ABOUT_IT = _about(
    r"per|sul|sulla|sui|sulle|su|riguardo|relative|di|del|della|dei|delle|dello|degli",
    r"te|voi|tuo|tua|tuoi|tue|vostr[oaie]|sistema|il sistema|sicurezza|etica|moderazione|"
    r"contenuti?|l'ia|l'assistente|il modello|quest[oaie]|la conversazione|la chat|sopra|"
    r"prima|sviluppator[ei]|gli sviluppatori|l'utente|utenti|operatore|privacy|riservatezza|"
    r"tutt[oaie]",
)
_ABOUT_RU = _about(
    r"по|для|о|об|насчёт|насчет|касательно|относительно",  # noqa: RUF001
    r"тебе|тебя|вам|вас|тво\w*|ваш\w*|систем\w*|безопасност\w*|эт\w*|чат\w*|разговор\w*|"
    r"разработчик\w*|пользовател\w*|ии|ассистент\w*|модел\w*|всем|всех",
)
"""Orders about something else in German, French, Spanish, Portuguese, Italian and Russian:
"die alten Anweisungen zur VPN-Einrichtung", "les consignes de stationnement", "las
instrucciones anteriores sobre el reembolso", "инструкции по VPN"."""
_NEW_ORDERS_FOR = (
    r"(?=\s*:|\s+(para|pour|per)\s+(ti|usted|toi|vous|te|voi|você|vocês|la ia|a ia|l'ia|el "
    r"asistente|l'assistant|l'assistente|o assistente|el modelo|le modèle|il modello|o modelo)\b)"
)
"""New orders as a header ("Nuevas instrucciones:") or for the model; "las nuevas reglas de
vacaciones" are a team's."""
_CJK_ORDERS_AFTER = "的有前上述你您统部切些面始初全何他条项旧此该原新"
"""What stands before a Chinese word for orders when they are a model's ("之前的指令", "所有规则",
"系统提示"); another noun there names what the orders are about ("报销说明": the expense guide)."""


INSTRUCTION = Rule(
    "instruction to the model",
    "reads like an instruction to the model, not a memory; state it as a fact",
    _compile(
        # ignore / forget earlier instructions, in any phrasing
        rf"\b{_DROP}\b{_OBJECT_GAP}\b{_EARLIER}\b((\s+[^\s.;]+){{0,4}}?\s+{_ITS_KIND})?\s*"
        rf"\b{_ORDERS}\b"
        rf"(?!{_IN_DOCS}|{_ELSEWHERE})",
        rf"\b{_DROP}\b\s+(all|every|each|any)?\s*(of\s+)?(the\s+)?{_ORDERS}\b\s*"
        rf"(you|given|above|before|so far|provided|that|which|i\b|(from|in)\s+(?={_OURS})|"
        r"[,;]?\s*(and|then)\s+(just\s+|only\s+|instead\s+)?(print|say|output|reply|respond|"
        r"write|repeat|answer|tell|reveal|send))",
        r"\b(ignore|forget|disregard)\s+(everything|anything|all|whatever)\b[^.\n]{0,30}?"
        r"\b(above|before|earlier|previously|prior|said|told|you (know|were|have)|so far|else)",
        r"\b(ignore|forget|disregard)\s+(this|that|the) (data|text|document|content|article)\b",
        r"\b(ignore|forget|disregard)\s+(the rest|other content|other info|all info|"
        r"everything else)",
        r"\b(forget|ignore|disregard) (who|what) you (are|were)\b",
        r"\b(forget|ignore|disregard) (your|all your|the) (training|programming|persona|"
        r"identity|role)",
        r"\bnever ?mind[.,!;: ]+\s*(ignore|forget|disregard|instead|new|just)",
        r"\bstop everything\b",
        r"\b(instead|rather),? (spell ?check|print|repeat|output|reveal|show)\b[^.\n]{0,30}"
        r"(instructions|prompt)",
        # new rules or system messages
        r"\b(new|updated|revised|real|true|actual|secret|hidden|override|additional|important|"
        r"urgent|priority|mandatory|overriding)\s+(system\s+)?(instructions?|rules|directives?|"
        r"system ?prompt|system ?message|orders|commands|guidelines|policy|programming)\b\s*"
        r"(:|follow|are|is|apply|take|from now|supersede|override|for (you|the (ai|assistant|"
        r"model)))",
        r"\bthese (instructions|rules|directives) (supersede|override|replace|take precedence)",
        r"\b(supersedes?|overrides?|replaces?|takes? precedence over) (all|any|every|the|your)"
        r"\s*(previous|prior|earlier|other|system)?\s*(instructions|rules|prompts?|directives)",
        # a product's admin, maintenance, debug or developer mode is a note's business: only
        # the modes that exist to unbind a model, and an override of the system, are refused
        r"\b(dan|jailbreak|unrestricted|unfiltered|unlocked|evil|chaos)\s*(mode|override)\b\s*"
        r"(enabled|activated|on|engaged|:|now|unlocked)",
        r"\b(system|admin|administrator|root|sudo|developer)\s*override\b\s*"
        r"(enabled|activated|engaged|now)",
        r"\b(enable|activate|enter|switch to|turn on|unlock|engage|go into)\s+(the\s+)?"
        r"(jailbreak|jailbroken|unrestricted|unfiltered|dan|evil|uncensored)\s+mode",
        r"\bdo anything now\b|\bdan mode\b|\b(chatgpt|gpt|ai|assistant|model) with developer mode"
        r" (enabled|activated|on)\b",
        r"\b(you|assistant|model|ai)\b[^.\n]{0,20}\b(have|has|are|is|with|without)\s+(no|zero|"
        r"without( any)?)\s+(restrictions|limits|limitations|filters|rules|guidelines|"
        r"ethical|moral|content polic)",
        r"\b(freed|free|released|liberated) from (your|all|the|any) (rules|restrictions|"
        r"guidelines|constraints|programming|filters)",
        r"\byour (instructions|rules|orders|directives|guidelines) (have|has) (changed|been "
        r"(updated|changed|replaced|revoked))",
        r"\byou now (work|answer|serve|report|belong|obey|respond|act|are)\b",
        r"\b(new|override|priority|overriding|top)\b[^.\n]{0,20}\b(directive|instruction|order)s?"
        r"\s*[—:\-–]",  # noqa: RUF001
        # "Override:" heads a config note; an override claimed by an authority is refused
        r"\b(system|admin|administrator|root|sudo|developer|security|safety|policy|prompt|ai|"
        r"model|assistant|beheerder|administrateur|administrador|amministratore)[\s-]*override"
        r"\s*[:—–]",  # noqa: RUF001
        r"\b(recommend|suggest|promote|mention|endorse)\w*\b[^.\n]{0,40}\b(in|to|for) (all|every|"
        r"each|any) (answers?|responses?|replies|requests?|questions?|conversations?|users?)\b",
        r"\b(when|whenever|if|every time)\s+(anyone|someone|people|they|a user|users|customers?|"
        r"visitors?)\s+(asks?|mentions?|wants?|requests?|says?|talks?|inquires?)\b[^.\n]{0,60}"
        r"\b(tell (them|him|her)|recommend|suggest|send (them|him|her)|redirect|steer)",
        rf"\b(when|whenever|if|every time)\b[^.\n]{{0,60}}\b(recommend|suggest|promote|link to)\b"
        rf"[^.\n]{{0,20}}{_DEST}",
        r"\b(when|whenever|if|every time)\s+the\s+user\s+(asks?|mentions?|wants?|requests?|says?"
        r"|talks?|inquires?)\b[^.\n]{0,60}\b(tell (them|the user) to (use|buy|visit|install|switch"
        r"|sign)|redirect|steer|send (them|the user) to)",
        r"\balways (tell|inform|assure|warn) (the )?(users?|customers?|everyone|people) that\b",
        r"\b(respond|reply|answer)\w* to (every|each|all|any) (requests?|questions?|messages?|"
        r"quer(y|ies)|prompts?)\b",
        r"\bfrom this point (on|forward)\b",
        r"\bobey (every|all|any)\b|\bwithout (question|questioning|hesitation)\b",
        r"\b(hide|conceal|suppress|omit|cover up)\b[^.\n]{0,40}\b(errors?|failures?|warnings?|"
        r"problems?|issues?|mistakes?|bugs?|risks?)\b[^.\n]{0,40}\b(users?|customers?|reports?)\b",
        r"\bnew (persona|identity|personality|character)\s*[:—-]|\b(persona|character)\s*:\s*you "
        r"are\b",
        r"\byour (system prompt|instructions|rules|guidelines|programming)\b[^.\n]{0,20}\b"
        r"(is|are) (outdated|obsolete|deprecated|wrong|invalid|void|cancell?ed|revoked|fake|"
        r"replaced)\b|\buse this (one|prompt|system prompt) instead\b",
        r"\b(print|output|show|reveal|dump|list|display|repeat)\b[^.\n]{0,20}\b(everything|all)\s+"
        r"(in|from) (your|the) (memory|memories|context)|\b(including|and|with|plus) other users'?"
        r" (notes|data|memor\w*|profiles?|messages|conversations|secrets)",
        r"\b(set|change) your (name|identity|persona|role)\b|\bstop (identifying|acting|behaving|"
        r"responding) as (an? )?(assistant|ai|claude|chatgpt|gpt|model|helpful)\b",
        r"\b(pretend|assume|act as if)\b (that )?(the user|they|i|we|the owner|the admin)\b "
        r"(already|has|have|had|gave)\b[^.\n]{0,30}\b(approv|authori[sz]|verif|confirm|consent|"
        r"allow|permi)",
        r"\b(do ?n[o']t|do not|never|no need to|stop)\s+(ask|asking|request|wait)\w*\s+(for\s+)?"
        r"(confirmation|permission|approval|consent)\b[^.\n]{0,30}\b(delet|remov|drop|wip|"
        r"transfer|pay|purchas|send|rm\b|destroy|overwrit|force|execut|run)",
        r"\b(save|store|remember|keep)\b[^.\n]{0,30}\b(memory|permanently|forever)\b[^.\n]{0,10}"
        r":\s*(always|never|you|from now)",
        r"(?<!never )(?<!not )(?<!n't )\b(print|list|show|output|reveal|dump|display)\b[^.\n]{0,60}"
        r"\b(api ?keys?|"
        r"tokens|credentials|secrets|passwords|environment variables|env vars)\b[^.\n]{0,60}"
        r"(\bavailable to you\b|\byou (can )?(have access|access|see)\b|\bin your (environment|"
        r"context|config\w*)\b)",
        r"\b(tools|apis|integrations|services|plugins) you (have access to|can (use|call|access))"
        r"\b[^.\n]{0,60}\b(api ?keys?|tokens|credentials|secrets|passwords)\b",
        r"\b(visible|addressed|meant|intended) (only )?(to|for) (the )?(llms?|ai|models?|language "
        r"models?|automated|assistants?|bots?|scanners?)\b(?! rather than)",
        r"\bfor (automated|ai|llm) (screening|analysis|review|evaluation|grading|scoring) "
        r"(systems?|software|tools?|models?)\b",
        r"\bif (questioned|asked|challenged)\b[^.\n]{0,30}\b(report|say|answer|respond|reply|"
        r"insist|claim) that\b",
        r"\bsystem chain of thought\b|\b(override|ignore) (manual|human) (scoring|review)",
        # "from now on" alone is how colleagues hand over work: refused where it rebinds a model
        r"\bfrom (now|this point|here) on(ward)?s?\b,?\s*(the (assistant|ai|model|bot|chatbot|llm)"
        r"|you (are|will be|shall be) (now )?(an? )?(dan|unrestricted|unfiltered|jailbroken|evil|"
        r"uncensored|ai|assistant|chatbot|language model)\b)",
        r"\b(the|an?)?\s*(note|message|instructions?|directive|command|memo|order)s?\s+"
        r"(from\s+[^:\n]{1,40}?\s+)?(to|for)\s+(the\s+)?(ai|a\.i\.|assistant|model|llm|"
        r"language model|chatbot|bot|agent|gpt|chatgpt|claude|gemini|copilot|automated|"
        r"reviewer model|summari[sz]er)\b(?!\s*(team|teams|desk|group|squad|owners?|channel|"
        r"developers?|engineers?|vendors?|project|roadmap|rollout|launch|features?|products?|"
        r"tools?|policy|policies|pilot|programm?e?|initiative|usage|budget|strategy|guild|"
        r"committee|working group)\b)[^:\n]{0,40}:",
        # a model called on by name or by what it is, then asked to act: the wrapper of a task
        # planted in a page ("By the way, Llama, the traveller wants you to book ...")
        rf"\b(hey|hi|hello|dear|attention|psst|ps|p\.s\.|quick favou?r|by the way|btw|note to|"
        rf"reminder to)[,!:]?\s+{_MODEL_ADDRESSEE}\s*[,:!]\s*(?={_ASKED_TO_ACT})",
        # a product's name heads a team's to-do ("Copilot: renew the seats") or a list of them;
        # a comma after it alone calls it
        rf"(^|[.!?;:\n]\s*){_MODEL_ADDRESSEE}\s*,(?!\s*[\w-]+( [\w-]+)?\s*(,|and\b|&|or\b))"
        rf"\s*(?={_ASKED_TO_ACT})",
        r"\b(ai|assistant|model|llm|chatbot|bot|agent|gpt|claude)s?,?\s+(must|should|shall|will"
        r"|needs? to|has to|is to|are to|is required to)\s+(now\s+|always\s+|from now on\s+)?"
        r"(ignore|obey|forget|disregard|reveal|comply|follow (these|the following|my|only))",
        r"\b(obey|follow|listen to|comply with)\s+(only\s+)?(me|these|the following|my|this "
        r"(note|message|memory|instruction))\b(?! (conventions?|style|guide|steps to)\b)",
        r"\b(only|exclusively)\s+(obey|follow|listen to)\b",
        r"\b(just|only|simply)\s+(say|print|output|reply|respond|write|answer)\s*(with\s*)?"
        r"[\"'“:<]",
        r"\b(print|say|output|repeat|write|reply|respond)\s+(exactly|verbatim|only)\b\s*[\"'“:<]",
        r"\b(respond|reply|answer)\s+(only\s+)?with\s+(only\s+)?(the following|this)\b",
        # role changes and new names
        # "you are now the owner of ..." hands a colleague a role: a note's business
        r"\byou\s*(are|'re|will be|shall be|become)\s+(now|no longer|henceforth|from now on)\b"
        rf"(?!\s+{_HANDED_ROLE})",
        r"\b(now|henceforth) you\s*(are|'re|will be|act|play|become)\b",
        r"\byou are (actually|really|secretly|in fact) (an?|the|my)\b",
        r"\byou\s*(are|'re) (an? )?(unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|"
        r"different|new) (ai|assistant|model|bot|chatbot|agent|persona|character)",
        r"\b(your|the assistant'?s?|the ai'?s?|the model'?s?) (new |real |true |actual )?"
        r"(name|identity|persona|role|purpose|goal|mission|task|objective) (is|are|will be|"
        r"shall be) (now|hereby|from now on|changed|henceforth)\b",
        r"\byour new (name|identity|persona|role|purpose|goal|mission|task|objective|"
        r"instructions?|rules|master|owner|boss)\b",
        r"\b(call|name|refer to) yourself\b",
        r"\b(pretend|imagine|act|behave|roleplay|role-play|play)\s+(to be|you are|that you are|"
        r"you're|as if you|as (an?|the|my))\b[^.\n]{0,40}\b(ai|assistant|model|bot|without|"
        r"unrestricted|unfiltered|no (rules|restrictions|limits)|evil|hacker|admin|dan|"
        r"developer|different|system|root|character|persona|grandma|grandmother)",
        r"\b(assume|adopt|take on)\s+(the|a|an)\s+(new\s+)?(role|persona|identity)\s+of\b",
        r"\bswitch (your (role|persona|identity)|persona|identity)\b",
        # reveal the system prompt or hidden instructions
        r"\b(reveal|print|show|output|repeat|leak|tell|display|dump|share|disclose|expose|"
        r"recite|echo|spell ?check|write out|copy|paste|give|list|summari[sz]e|translate|"
        r"what (is|are|were))\b[^.\n]{0,40}?(\byour\s+(system\s*)?(prompt|instructions?|"
        r"directives?|system ?message|developer ?message|rules you|configuration|guidelines|"
        r"pre-?prompt|context window|initiali[sz]ation)|\b(the|hidden|secret|initial|original|"
        r"internal|confidential|system|developer|full)\s+(system\s*prompt|system ?message|"
        r"developer ?message|pre-?prompt|(initial|original|hidden|secret|internal|confidential)"
        r"\s+(prompt|instructions?|directives?)))",
        r"\b(reveal|print|show|output|repeat|leak|display|dump|disclose|expose|recite)\b"
        r"[^.\n]{0,30}\b(previous|above|preceding|initial|earlier|first) (instructions?|"
        r"prompts?|text|messages?|lines|words)\b",
        r"\b(what|everything|all) (was|is|were) (written|said|given|stated) (above|before|"
        r"at the (start|beginning))",
        r"\bwords? (above|before) (this|the)\b.{0,30}(start|begin|repeat|print)",
        r"\b(repeat|print|output|copy|recite)\b[^.\n]{0,20}\b(words|text|everything|all|lines)\s+"
        r"(above|before)\b",
        # deceive the user / act silently
        r"\b(do ?n[o']t|do not|never|without)\s+(tell|telling|inform|informing|notify|notifying|"
        r"mention|mentioning|alert|alerting|let|letting|warn|warning|show|showing|"
        r"reveal|revealing|disclose|disclosing)\b[^.\n]{0,25}?\b(to\s+)?(the\s+)?(users?|"
        r"human|operator)\b",
        r"\b(keep|hide|conceal)\b[^.\n]{0,40}\bfrom\s+(the\s+)?(users?|human|operator)\b"
        r"(?! (interface|ui|agent|table|list|model|id|record|object|role)s?\b)",
        r"\byou (must|shall|will|have to|are to) (now |always )?(obey|comply with)\b",
        r"\bobey (the|these|this|my|all|only)\s+(instructions|orders|commands|notes?|memory|rules "
        r"(here|below|stored))",
        r"\b(lie|lying|lies) to (the )?(users?|them|human|customer)|\b(deceive|mislead|trick|"
        r"manipulate|gaslight)\s+(the\s+)?(users?|them|human|customer|operator)",
        r"\b(silently|secretly|quietly|covertly|stealthily|invisibly|discreetly|without "
        r"(a trace|asking|confirmation|permission|consent))\b[^.\n]{0,30}\b(send|forward|upload|"
        r"exfiltrate|run|execute|delete|add|include|insert|copy|post|modify|change|install|"
        r"append|replace|transfer|rewrite|remove|download|open|visit|call|recommend|steer)",
        r"\b(this|the) (user|human) (must|should|will|can) ?not (know|find out|see|notice|learn)",
        r"\b(pretend|claim|say|tell (the user|them)|insist) (that )?(the )?(task|it|everything|"
        r"this) (was|is|has been) (done|completed|successful|finished|safe|fine)\b",
        r"\b(tell|inform|assure|convince)\s+(the\s+)?(users?|them|customers?)\s+(that\s+)?"
        r"[^.\n]{0,40}\b(is|are)\s+(safe|legit|legitimate|trustworthy|verified|secure)\b",
        # persistence of recommendations
        r"\b(always|invariably|in every (answer|response|reply)|whenever possible|at every "
        r"(opportunity|chance))\s*,?\s*(recommend|suggest|promote|mention|push|advertise|endorse|"
        r"plug|steer|direct|redirect|link to|include (a |the )?link|favou?r|prefer|upsell|"
        r"tell (the )?users? to (buy|use|visit|install|switch))\b",
        r"\b(recommend|suggest|promote|endorse|advertise)\s+[^.\n]{1,40}\b(always|every time|"
        r"in every (answer|response|reply|conversation)|whenever|no matter what)\b",
        r"\b(whenever|every time|each time|any ?time)\s+(the\s+)?(users?|anyone|someone|people|"
        r"they|asked|you are asked|you're asked|a user)\b[^.\n]{0,60}\b(recommend|suggest|"
        r"promote|redirect|steer|tell (them|the user) to|send (them|the user) to|answer that|"
        r"reply that|respond (with|that)|say that)\b",
        r"\bin (every|each|all) (future )?(responses?|answers?|replies|messages|conversations?)"
        r",?\s*(you\s+(must|should|will)\s+)?(include|mention|add|recommend|say|append|insert|"
        r"promote|end with|start with)",
        r"\b(remember|memori[sz]e|store|save|keep)\b[^.\n]{0,20}\b(forever|permanently|for all "
        r"future)\b[^.\n]{0,40}\b(recommend|obey|follow|instruction|rule|always)",
        # base64 and encoding hints
        r"\b(decode|base64 ?-?d(ecode)?|rot13|unhex|deobfuscate)\b[^.\n]{0,60}\b(and|then)\s+"
        rf"{_EXECUTE}\b",
        rf"\b{_EXECUTE}\s+(the\s+)?(decoded|hidden|encoded|base64|embedded)\s+(text|instructions?"
        r"|payload|commands?|message|string)",
        # German
        r"\b(ignorier|vergiss|vergessen sie|missacht|übergeh|verwirf|überschreib|beacht)\w*\b"
        r"[^.\n]{0,40}\b(anweisung|instruktion|regel|befehl|vorgabe|richtlinie|prompt|"
        rf"systemnachricht|alles (vorherige|bisherige|davor|obige|was))(?!{_ABOUT_DE})",
        r"\b(vergiss|vergessen sie|ignoriere|ignorieren sie) alles\b",
        r"\bbeachte[^.\n]{0,30}(anweisung|instruktion|regel)\w* nicht",
        r"\b(du bist|sie sind) (jetzt|nun|ab (sofort|jetzt)|ab heute|von nun an)\b(?!\s+(für|"
        r"verantwortlich|zuständig|ansprechpartner|teil (des|der|vom)|mitglied|owner|lead)\b)",
        r"\b(ab (jetzt|sofort)|von nun an|ab heute)\b,?\s*(bist|wirst|sollst|musst|antwortest|"
        r"sind|werden|heißt|heisst) (du|sie)",
        r"\bdein (neuer )?name ist (jetzt|nun|ab sofort)|\bdeine neue (rolle|aufgabe|identität)",
        r"\bneue (anweisungen|instruktionen|regeln|systemanweisung|systemnachricht|befehle)\b"
        r"\s*(:|für (dich|sie|die ki|den assistenten|das modell|den bot)|gelten ab|ab sofort|"
        r"befolge)",
        r"\b(zeig|gib|verrat|enthüll|nenn|wiederhol|druck|schreib)\w*\b[^.\n]{0,40}"
        r"(systemprompt|system-prompt|systemanweisung|systemnachricht|(versteckten|geheimen|"
        r"ursprünglichen|ersten|internen) (anweisungen|instruktionen|regeln)|deine (anweisungen|"
        r"instruktionen))",
        r"\b(sag|erzähl|verrat|sagen sie)\w*\b[^.\n]{0,30}\b(dem |den )?(benutzer|nutzer|user|"
        r"anwender)\w* (nichts|nicht)",
        r"\bohne (dass )?(den |dem |der )?(benutzer|nutzer|user|anwender)\w* (zu |es )?"
        r"(informieren|sagen|benachrichtigen|merkt|weiß|erfährt|fragen)",
        r"\b(heimlich|unbemerkt|stillschweigend|im hintergrund)\b[^.\n]{0,40}\b(send|schick|"
        r"lade|führ|lösch|installier|ausführ|übertrag)",
        r"\b(empfiehl|empfehlen sie|bewirb|erwähne) (immer|stets|jedes mal)|\b(immer|stets)\b"
        r"[^.\n]{0,30}\bempfehlen\b",
        # Spanish
        r"\b(ignora|ignore|ignorad|ignoren|olvida|olvide|olviden|descarta|omite|desobedece|"
        r"salta(te)?)\b[^.\n]{0,40}\b(instrucciones|indicaciones|reglas|órdenes|directrices|"
        rf"normas|todo lo (anterior|que))(?!{_ABOUT_ES})",
        r"\b(olvida|olvide|ignora)\s+todo\b",
        r"\b(a partir de ahora|desde ahora|de ahora en adelante|ahora)\b,?\s*(eres|serás|"
        r"debes|vas a|tu nombre es|te llamas|actuarás|responderás)\b",
        r"\b(nuevas|nuevos) (instrucciones|reglas|órdenes|directrices)\b"
        rf"{_NEW_ORDERS_FOR}|\btu nuevo (nombre|"
        r"rol|papel)\b|\btu nueva (identidad|función|tarea)\b",
        r"\b(revela|muestra|dime|imprime|repite|enséñame|comparte|escribe)\b[^.\n]{0,40}"
        r"(prompt del sistema|indicaciones del sistema|mensaje del sistema|instrucciones "
        r"(del sistema|ocultas|iniciales|originales|secretas|internas)|tus instrucciones)",
        r"\bno (le )?(digas|informes|menciones|cuentes|avises|reveles)\b[^.\n]{0,20}"
        r"\b(al|a los) usuarios?\b",
        r"\bsin (decirle|informar|avisar|notificar|que (lo )?sepa)\w*\b[^.\n]{0,10}"
        r"(al |el )?usuario",
        r"\b(en secreto|a escondidas|silenciosamente|sigilosamente)\b[^.\n]{0,40}\b(envía|"
        r"manda|sube|ejecuta|borra|instala|copia)",
        r"\b(recomienda|sugiere|promociona) siempre\b|\bsiempre (recomienda|sugiere|promociona)"
        r"\b",
        # French
        r"\b(ignore(?=\s+(les|la|le|l'|toutes?|tous|tout|ces|cette|cet|vos|tes|mes|nos|des|du|"
        r"de|d'|ce|ça|ses|son|sa|ton|ta|mon|ma)\b)|ignore[rz]|oublie[rz]?|néglige[rz]?|"
        r"contourne[rz]?|passe[rz]? outre|ne tiens? "
        r"pas compte|ne tenez pas compte)\b[^.\n]{0,40}\b(instructions|consignes|règles|"
        rf"directives|ordres|indications|tout ce qui)(?!{_IN_DOCS}|{_ABOUT_FR}|\s+(dans|sur|du|"
        r"de la) (le |la |l')?(wiki|runbook|readme|manuel|guide|confluence|intranet)\b)",
        r"\boublie[rz]? tout\b|\bignore[rz]? tout\b",
        r"\b(tu es|vous êtes) (maintenant|désormais|dorénavant|à présent)\b",
        r"\b(à partir de maintenant|désormais|dorénavant|à présent)\b,?\s*(tu|vous|ton nom|"
        r"votre nom|réponds|répondez|agis|agissez)",
        r"\b(nouvelles|nouveaux) (instructions|consignes|règles|directives|ordres)\b"
        rf"{_NEW_ORDERS_FOR}|"
        r"\bton nouveau (nom|rôle)\b|\bta nouvelle (identité|mission|tâche)",
        r"\b(révèle|montre|affiche|donne|répète|dévoile|écris|imprime|dis-moi)\w*\b[^.\n]{0,40}"
        r"(prompt (du )?système|invite (du )?système|message (du )?système|instructions "
        r"(du )?(système|cachées|initiales|secrètes|internes|d'origine)|tes instructions|vos "
        r"instructions)",
        r"\bne (lui )?(dis|dites|mentionne|mentionnez|signale|révèle)\w* (rien|pas)\b[^.\n]{0,20}"
        r"(à )?l'utilisat",
        r"\bsans (le dire|prévenir|informer|avertir|en informer|que)\b[^.\n]{0,10}l'utilisat",
        r"\b(en secret|secrètement|discrètement|silencieusement|en douce)\b[^.\n]{0,40}"
        r"\b(envoie|envoyer|transmet|exécute|supprime|installe|copie|télécharge)",
        r"\b(recommande|suggère|conseille)[rz]? toujours\b|\btoujours (recommander|recommande|"
        r"suggérer|conseiller)\b",
        # Portuguese
        r"\b(ignore|ignora|ignorem|esqueça|esquece|esqueçam|desconsidere|descarte|despreze)\b"
        r"[^.\n]{0,40}\b(instruções|instrucoes|regras|orientações|ordens|diretrizes|comandos|"
        rf"tudo (o que|acima|antes))(?!{_ABOUT_PT})",
        r"\b(esqueça|esquece|ignore) tudo\b",
        r"\b(a partir de agora|de agora em diante|agora)\b,?\s*(você é|você será|tu és|você "
        r"deve|você vai|seu nome é|teu nome é|responda|aja)\b",
        r"\b(novas|novos) (instruções|regras|ordens|diretrizes)\b"
        rf"{_NEW_ORDERS_FOR}|\bseu novo (nome|papel)\b|"
        r"\bsua nova (identidade|função|tarefa)",
        r"\b(revele|mostre|diga|imprima|repita|exiba|compartilhe|escreva)\b[^.\n]{0,40}"
        r"(prompt do sistema|mensagem do sistema|instruções (do sistema|ocultas|iniciais|"
        r"originais|secretas|internas)|suas instruções)",
        r"\bnão (conte|diga|informe|mencione|avise|revele)\b[^.\n]{0,20}\b(ao|aos) usuários?\b",
        r"\bsem (contar|informar|avisar|notificar|que o usuário)\b[^.\n]{0,10}usuário",
        r"\b(em segredo|secretamente|silenciosamente|às escondidas)\b[^.\n]{0,40}\b(envie|"
        r"mande|execute|apague|instale|copie|carregue)",
        r"\b(sempre recomende|recomende sempre|sempre sugira|sugira sempre)\b",
        # Italian
        r"\b(ignora|ignorate|dimentica|dimenticate|trascura|scarta|non considerare)\b[^.\n]"
        r"{0,40}\b(istruzioni|regole|indicazioni|direttive|ordini|comandi|tutto (quello|ciò|"
        rf"sopra))(?!{_ABOUT_IT}|\s+(nella|nel|sulla|sul|della|del) (wiki|runbook|readme|"
        r"manuale|guida|pagina|confluence|intranet)\b)",
        r"\b(dimentica|ignora) tutto\b",
        r"\b(d'ora in poi|da ora in poi|da adesso|adesso|ora)\b,?\s*(sei|tu sei|devi|ti chiami|"
        r"il tuo nome è|rispondi|agisci)\b",
        r"\b(nuove) (istruzioni|regole|direttive)\b"
        rf"{_NEW_ORDERS_FOR}|\bil tuo nuovo (nome|ruolo)\b|"
        r"\bla tua nuova (identità|funzione)",
        r"\b(rivela|mostra|stampa|ripeti|dimmi|scrivi|condividi)\b[^.\n]{0,40}(prompt di "
        r"sistema|messaggio di sistema|istruzioni (di sistema|nascoste|iniziali|originali|"
        r"segrete|interne)|le tue istruzioni)",
        r"\bnon (dire|dirlo|informare|menzionare|avvisare|rivelare)\b[^.\n]{0,20}\ball'utent",
        r"\bsenza (dirlo|informare|avvisare|che l'utente)\b[^.\n]{0,10}utent",
        r"\b(in segreto|segretamente|silenziosamente|di nascosto)\b[^.\n]{0,40}\b(invia|manda|"
        r"esegui|cancella|installa|copia|carica)",
        r"\b(consiglia|raccomanda|suggerisci) sempre\b|\bsempre (consigliare|raccomandare)\b",
        # Russian
        r"(игнорир|забуд|забыть|не обращай|не учитывай|отбрось|проигнорир|отмени|пренебреги)"
        rf"[^.\n]{{0,40}}(инструкц|указани|правил|команд|промпт|сказанное|всё|все)(?!{_ABOUT_RU})",
        r"(теперь ты|ты теперь|отныне ты|с этого момента,? ты)\b",  # noqa: RUF001
        r"(новые|новая) (инструкц\w*|правил\w*|системн\w* \w+)\s*(:|для (тебя|вас|ии|"
        r"ассистента|модели|бота)\b)|(твоя|ваша) новая роль|твоё новое имя|твое новое имя|тебя "
        r"(теперь )?зовут",
        r"(покажи|выведи|раскрой|повтори|скажи|напиши|распечатай|расскажи)[^.\n]{0,40}"
        r"(системн\w* (промпт|инструкц|сообщени|подсказ)|скрыт\w* инструкц|исходн\w* инструкц|"
        r"свои инструкц|твои инструкц)",
        r"не (говори|сообщай|рассказывай|показывай|уведомляй)[^.\n]{0,20}пользовател",
        r"без ведома пользовател|тайно|незаметно для пользовател",
        r"всегда (рекомендуй|советуй|предлагай)|(рекомендуй|советуй) всегда",
        # Chinese
        r"(忽略|忽视|无视|不要理会|别理会|忘记|忘掉|抛弃|丢弃|跳过)[^。\n]{0,12}"
        rf"((?<=[略视会记掉弃过{_CJK_ORDERS_AFTER}])(指令|指示|说明|规则|提示|命令|要求|设定|内容)|一切|所有)",
        r"(你现在是|现在你是|你从现在起是|(从现在(开始|起)|从今以后|从此以后)[，,]?\s*(你|您))",  # noqa: RUF001
        r"(你的新|新的)(名字|角色|身份|任务|指令|规则|系统提示)",
        r"(显示|输出|透露|告诉我|泄露|打印|重复|展示|给我看|说出)[^。\n]{0,12}(系统提示|系统指令|系统消息|隐藏(的)?指令|初始(的)?指令|原始(的)?指令|提示词|你的指令)",
        r"(不要|别|不准|不得)(告诉|通知|提醒|让)[^。\n]{0,4}用户|瞒着用户|用户不知道",
        r"(悄悄|偷偷|秘密地|暗中|默默地?)[^。\n]{0,12}(发送|上传|执行|删除|安装|复制|运行|转发|推荐)",
        r"(总是|始终|一直|每次都)(推荐|建议|推销)",
        # Japanese
        r"(以前|前|上記|これまで|すべて|全て|今まで|先ほど|元)の(指示|命令|指令|ルール|プロンプト|設定|内容)[^。\n]{0,8}(無視|忘れ|破棄)",
        r"(指示|命令|指令|ルール|プロンプト)[^。\n]{0,4}(を)?(無視|忘れて|破棄)",
        r"(あなたは|君は)(今から|これから|今後|もう)|(今から|これから|今後)(あなたは|君は|お前は)",
        r"(新しい|新たな)(指示|命令|ルール|システムプロンプト|名前|役割)|あなたの新しい",
        r"(システムプロンプト|システムメッセージ|隠された指示|初期指示|元の指示|あなたの指示)[^。\n]{0,12}(教えて|表示|見せて|出力|明かして|繰り返|書いて|言って)",
        r"ユーザー(には|に)(言わ|伝え|知らせ|教え)ないで|ユーザーに(気づかれ|知られ)ない",
        r"(こっそり|密かに|ひそかに|黙って)[^。\n]{0,12}(送信|送って|アップロード|実行|削除|インストール|コピー|推薦)",
        r"(常に|いつも|必ず)[^。\n]{0,10}(推薦|おすすめ|勧め|推奨)して",
    ),
)

ROLE_MARKER = Rule(
    "role or tag marker",
    "holds a chat role or prompt tag, which reads as an instruction to the model; memory is data",
    _compile(
        # the tags of this plugin's own prompt and a model's special tokens; markup named after
        # a chat role (<system>, ### Assistant) is how a team quotes its chatbot's template
        r"<\s*/\s*(user_memory|memory_document|recent_memory_notes|conversation_summary|"
        r"previous_summary|pinned_memory|pinned_entries|memory_entries|user_entries|"
        r"agent_memory|memory|profile|notes|im_start|im_end)\s*>",
        r"<\s*(user_memory|memory_document|recent_memory_notes|conversation_summary|"
        r"pinned_memory|memory_entries|user_entries|im_start|im_end|system_prompt)\s*>",
        r"<\|[a-z_ ]{2,20}\|>|\[/?inst\]|<</?sys>>|\[/?(system|admin|developer|assistant)"
        r"( message| note| prompt)?\]|\{\{\s*system|\bend of (system )?(prompt|instructions|"
        r"document|context|memory)\b|<end of session>",
        r"(<!--|/\*|//|\#|;|--|%|\{#|<\?)[\s\-_*]{0,20}(system|assistant|developer|ai|model|human|"
        r"user|instruction|admin)s?\s*(message|note|prompt)?\s*:",
        # a line headed by a chat role, or by a job (developer, admin) speaking as a prompt does:
        # "Developer note:" and "Admin:" head colleagues' notes
        r"(^|\n)[^\S\n]*+[-*>]*+[^\S\n]*+((system|assistant|ai|human|sistema|système|systeme|"
        r"система|ассистент|システム|系统|助手)\s*(message|note|notice|prompt|instruction|override|"
        r"directive|update|alert|nachricht|mensaje|mensagem|messaggio|сообщение|メッセージ|消息)?|"
        r"(developer|admin|administrator|root)\s*(message|prompt|instruction|override|directive|"
        r"nachricht|mensaje|mensagem|messaggio|сообщение|メッセージ|消息))"
        r"\s*[:：]\s*[^\n]{0,80}?(\b(you|your|ignore|forget|"  # noqa: RUF001
        r"disregard|from now|always|never|do not|don't|must|new (rules|instructions|role|name|"
        r"task)|comply|grant|unrestricted|respond|reply|answer|print|say|reveal|focus|obey|"
        r"follow|override|du|dein\w*|dich|dir|sie|tu|vous|usted|você|voi)\b|ты |вы |你|あなた|"
        r"ignor|olvid|oubli|esque|dimentic|vergiss|игнор|забуд|忽略|無視)",
        r"(^|\n)[^\S\n]*+(user|human|assistant|ai)\s*:[^\n]*+(\n[^\S\n]*+)++(user|human|assistant|ai)\s*:",
        r"\b(system|developer) (message|prompt|instruction|override|directive)s?\s*[:：]",  # noqa: RUF001
        r"\b(assistant|user|human)\s*:\s*(\[|<)\s*(salient|detailed|summary|assistant)",
        r"(^|\n)[^\S\n]*+[-*>]*+[^\S\n]*+(assistant|user|human)\s*:\s*(thanks|could you|please|sure"
        r"|ok|okay|of course|next)\b",
        r"[.!?]\s+(assistant|ai|model)\s*:\s*(sure|ok|okay|of course|here is|here's|yes)\b",
    ),
)

EXFILTRATION = Rule(
    "secret exfiltration",
    "asks to send secrets, files or the conversation somewhere; memory cannot",
    _compile(
        rf"\b{_FETCHERS}\b[^\n]{{0,200}}(-d\b|--data|-f\b|--form|-t\b|--upload-file|-x ?post|"
        r"--post|@|\$\(|`|\?[a-z_]*=)[^\n]{0,120}(\.env\b|\.netrc|\.pgpass|aws/credentials|"
        r"id_rsa|id_ed25519|\.ssh|/etc/passwd|/etc/shadow|\$[a-z_]*(key|token|secret|pass|"
        r"cred)|printenv|\benv\b(?![\"']?\s*[:=])|history|\.git-credentials|\.npmrc|\.pypirc|"
        r"\.docker/config|"
        r"\.kube/config|credentials|secrets?\b|token|api_?key|password)",
        r"(\.env\b|\.netrc|\.pgpass|aws/credentials|id_rsa|id_ed25519|\.ssh\b|/etc/passwd|"
        r"/etc/shadow|printenv|\benv\b|\.git-credentials|\.npmrc|\.pypirc|\.docker/config|"
        r"\.kube/config|\$[a-z_]*(key|token|secret|pass))[^\n]{0,80}(\||>|;|&&)\s*"
        rf"({_FETCHERS}|nc\b|ncat\b|netcat\b|socat\b|scp\b|rsync\b|mail\b|sendmail\b|base64)",
        r"\b(nc|ncat|netcat|socat|scp|rsync|sftp|ftp)\b[^\n]{0,80}(\.env\b|\.netrc|\.pgpass|"
        r"aws/credentials|id_rsa|id_ed25519|\.ssh/|/etc/passwd|/etc/shadow|\.git-credentials)"
        r"[^\n]{0,80}(@|:|\d+\.\d+|\.[a-z]{2,6}\b)",
        r"(requests|httpx|urllib|axios|fetch)\.?(post|put|get|request)?\s*\([^\n]{0,120}"
        r"(os\.environ|getenv|\.env\b|token|secret|api_?key|password|credentials|id_rsa|"
        r"history|conversation)",
        rf"{_CUE}{_SEND}\b[^\n]{{0,80}}?(?<![a-z0-9]){_SECRET_THINGS}[^\n]{{0,100}}?\b(to|at|into|via|on|"
        rf"towards|using)\b[^\n]{{0,40}}?{_DEST}",
        rf"{_CUE}(read|cat|open|grab|collect|gather|extract|get|take|look up|find|harvest|scrape"
        rf"|steal|copy|encode|base64)\b[^\n]{{0,60}}?(?<![a-z0-9]){_SECRET_THINGS}[^\n]{{0,100}}?\b(and|then"
        rf"|,)\s*(then\s+)?{_SEND}\b",
        rf"\b(whenever|when|if|every time|each time|as soon as)\b[^\n]{{0,60}}?{_SECRET_THINGS}"
        rf"[^\n]{{0,80}}?\b{_SEND}\b[^\n]{{0,80}}?{_DEST}",
        r"\b(include|append|add|insert|reveal|leak|print|output|show|disclose|paste|echo|put)\b"
        r"[^.\n]{0,30}\b(user'?s?|their|all|any|the|your)\s+(api ?keys?|tokens?|passwords?|"
        r"secrets?|credentials|private keys?|ssh keys?)\b[^.\n]{0,40}\b(answers?|responses?|"
        r"replies|summar(y|ies)|output|end|reports?|messages?|emails?)\b",
        r"\b(enter|type|provide|submit|confirm|verify|re-?enter|give)\b[^.\n]{0,30}\b(password|"
        r"credentials|login details|2fa|otp|card number|pin|ssn|seed phrase|recovery phrase)\b"
        r"[^.\n]{0,30}(https?:|www\.|\blink\b|\burl\b|\bsite\b|\bform\b)",
        r"\b(cat|type|head|tail|less|more|print|read)\s+[^\s]*(\.ssh/id_|id_rsa|id_ed25519|\.env\b|"
        r"\.netrc|\.pgpass|aws/credentials|/etc/shadow|\.git-credentials)[^\n]{0,60}\b(include|"
        r"paste|send|show|output|print|add|append|answer|reply|response|post)",
        r"\b(base64|encode|hex|xxd)\b[^\n]{0,20}(\.env\b|\.netrc|\.pgpass|id_rsa|secrets?|keys?|"
        r"tokens?|credentials|passwords?)[^\n]{0,60}\b(dns|lookup|nslookup|dig|subdomain|url|query|"
        r"request|image|webhook)\b|\b(nslookup|dig|host)\b[^\n]{0,40}\$\(",
        r"!\[[^\]\n]*\]\(\s*https?://[^)\n]*[?&/][^)\n]*(\{|\$|<|conversation|history|chat|"
        r"secret|token|key|password|data=|q=|d=|prompt|summary|session|user)",
        r"\b(include|embed|append|encode|put|add|insert)\b[^\n]{0,80}\b(conversation|chat "
        r"history|history|secrets?|tokens?|api ?keys?|passwords?|credentials|user data|"
        r"system prompt)\b[^\n]{0,60}\b(in|into|as|to)\b[^\n]{0,30}\b(url|link|image|query|"
        r"parameter|request|webhook|markdown image)",
        # German, Spanish, French, Portuguese, Italian, Russian, Chinese, Japanese
        r"\b(sende|schicke|übertrage|lade|leite)\w*\b[^\n]{0,80}(api-?schlüssel|schlüssel|"
        r"token|passw[oö]rt|zugangsdaten|geheimnisse|\.env|unterhaltung|gesprächsverlauf|"
        r"chatverlauf|konversation)[^\n]{0,80}(an|nach|zu|auf|hoch)\b[^\n]{0,40}(https?:|"
        r"[a-z0-9-]+\.(com|net|org|io|xyz|ru|de)\b|url|server|webhook)",
        r"\b(envía|envia|manda|sube|reenvía|transmite|envíe)\w*\b[^\n]{0,80}(claves?|tokens?|"
        r"contraseñas?|credenciales|secretos|\.env|conversación|historial)[^\n]{0,80}(a|al|"
        r"hacia|en)\b[^\n]{0,40}(https?:|[a-z0-9-]+\.(com|net|org|io|xyz|ru|es)\b|url|servidor)",
        r"\b(envoie|envoyez|envoyer|transmet|transmettez|téléverse|expédie)\w*\b[^\n]{0,80}"
        r"(clés?|tokens?|jetons?|mots? de passe|identifiants|secrets|\.env|conversation|"
        r"historique)[^\n]{0,80}(à|vers|sur|au)\b[^\n]{0,40}(https?:|[a-z0-9-]+\.(com|net|org|"
        r"io|xyz|ru|fr)\b|url|serveur)",
        r"\b(envie|envia|mande|carregue|transmita|encaminhe)\w*\b[^\n]{0,80}(chaves?|tokens?|"
        r"senhas?|credenciais|segredos|\.env|conversa|histórico)[^\n]{0,80}(para|ao|em)\b"
        r"[^\n]{0,40}(https?:|[a-z0-9-]+\.(com|net|org|io|xyz|ru|br)\b|url|servidor)",
        r"\b(invia|manda|carica|trasmetti|inoltra)\w*\b[^\n]{0,80}(chiavi|chiave|token|"
        r"password|credenziali|segreti|\.env|conversazione|cronologia)[^\n]{0,80}(a|al|su|"
        r"verso)\b[^\n]{0,40}(https?:|[a-z0-9-]+\.(com|net|org|io|xyz|ru|it)\b|url|server)",
        r"(отправ|перешли|пересыл|загрузи|выгрузи|слей|передай)\w*[^\n]{0,80}(ключ|токен|"
        r"парол|секрет|учётн|учетн|\.env|переписк|разговор|истори)[^\n]{0,80}(на|в|по)\s"
        r"[^\n]{0,40}(https?:|[a-z0-9-]+\.(com|net|org|io|xyz|ru)\b|url|сервер|адрес)",
        r"(发送|上传|转发|传到|发给|发到|提交)[^\n]{0,30}(密钥|令牌|密码|凭证|凭据|秘密|\.env|对话|聊天记录|历史)|(密钥|令牌|密码|凭证|凭据|\.env|对话|聊天记录)[^\n]{0,30}(发送|上传|转发|传到|发给|发到)[^\n]{0,30}(https?:|网址|服务器|url)",
        r"(鍵|キー|トークン|パスワード|認証情報|秘密|\.env|会話|履歴)[^\n]{0,30}(送信|送って|アップロード|転送)",
    ),
)

BACKDOOR = Rule(
    "persistence or backdoor",
    "installs access, a startup hook or remote code; memory cannot",
    _compile(
        rf"\b{_FETCHERS}\b[^|\n]{{0,200}}\|\s*({_SHELLS})",
        rf"({_SHELLS})\s*(-c\s*)?[\"']?\s*(<\(|\$\(|`)\s*{_FETCHERS}",
        rf"\b(eval|exec|source|\.)\s+[\"']?\$?\(\s*{_FETCHERS}",
        r"\b(iex|invoke-expression)\b[^\n]{0,80}(downloadstring|iwr|irm|invoke-webrequest|"
        r"webclient|http)|(downloadstring|downloadfile)\s*\([^\n]{0,80}\)[^\n]{0,20}(iex|"
        r"invoke-expression|start-process)",
        r"/dev/(tcp|udp)/|\b(nc|ncat|netcat)\b[^\n]{0,40}\s-[a-z]*e\s|\bsocat\b[^\n]{0,60}"
        r"exec:|mkfifo[^\n]{0,80}\b(nc|ncat|netcat|sh)\b|\bbash -i\b|\bpty\.spawn\b",
        rf"(>>|\btee\b(\s+-a)?|\bcp\b|\bmv\b|\bln\b|\bcat\b[^\n]{{0,40}}>)\s*[^\n]{{0,40}}"
        rf"{_SHELL_FILES}",
        rf"\b(echo|printf)\b[^\n]{{0,300}}>\s*[^\n]{{0,20}}{_SHELL_FILES}",
        rf"{_CUE}(add|append|insert|write|put|place|copy|install|drop|plant|inject|register)\b"
        r"[^\n.]{0,80}?\b(to|into|in|under|onto)\b\s+(the\s+|my\s+|your\s+|their\s+|every\s+)?"
        rf"[^\n.]{{0,30}}{_SHELL_FILES}",
        r"\b(ssh-(rsa|ed25519|dss)|ecdsa-sha2-nistp\d+) aaaa[^\n]{0,400}(authorized_keys|"
        r"\badd\b|\bappend\b|\binstall\b|\bgrant\b)|\b(add|append|install|grant|authori[sz]e)"
        r"\b[^\n]{0,60}\b(ssh-(rsa|ed25519|dss)|ecdsa-sha2)",
        r"\b(crontab -(?!l\b)|@reboot\b|\bschtasks\b[^\n]{0,40}/create|\bsystemctl enable\b"
        r"[^\n]{0,60}(http|curl|wget|\.sh\b)|\bnew-scheduledtask|\breg add\b[^\n]{0,80}\\run\b)",
        r"\b(create|add|set up|install|register|schedule)\b[^\n.]{0,30}\b(cron ?job|cron entry|"
        r"crontab|scheduled task|startup (script|item|entry)|launch ?agent|launch ?daemon|"
        r"systemd (service|unit|timer)|login hook|git hook|pre-commit hook|service)\b[^\n.]{0,60}"
        rf"\b({_FETCHERS}|download|fetch|connect|beacon|phone home|call home|remote|reverse|"
        r"http|runs? (a |the )?(script|payload) from)",
        r"\b(usermod\b[^\n]{0,30}(sudo|wheel|admin)|useradd\b|adduser\b[^\n]{0,30}(sudo|admin)|"
        r"nopasswd|chmod\s+([ugoa]*\+s|[4-7][0-7]{3})\b|setuid|visudo|passwd\s+root)",
        rf"\b(fetch|download|get|pull|load|retrieve|check|read|visit|open|grab|poll|query|curl|"
        rf"wget|consult|look at)\b[^\n]{{0,80}}?{_DEST}[^\n]{{0,120}}?\b(and|then|,)\s*(then\s+)?"
        rf"(blindly\s+|immediately\s+|automatically\s+)?{_EXECUTE}\b",
        rf"\b{_EXECUTE}\s+(the\s+|whatever\s+|any\s+|all\s+)?(instructions?|tasks?|commands?|"
        rf"orders|directives|scripts?|code|payloads?|steps)\s+(at|from|found (at|on|in)|listed "
        r"(at|on)|hosted (at|on)|posted (at|on)|in|on|served (at|by)|returned by)\s+[^\n]{0,30}?"
        rf"{_DEST}",
        rf"\b(every|each|at the start of (every|each)|on every|before (every|each)|at every)\s+"
        r"(session|turn|conversation|time|morning|hour|day|run|startup|message|request|reply)"
        rf"\b[^\n]{{0,80}}?\b(fetch|check|visit|open|load|read|poll|download|curl|get)\b"
        rf"[^\n]{{0,60}}?{_DEST}",
        rf"{_DEST}[^\n]{{0,60}}\b(contains|has|hosts|lists|serves|provides)\b[^\n]{{0,30}}\b(your"
        r"|the|new|updated|latest)?\s*(instructions|tasks|commands|orders|directives)\b",
        r"\b(download|fetch|wget|curl)\b[^\n]{0,120}\b(and|then|&&|;)\s*(run|execute|chmod|"
        r"bash|sh|python|start)\b[^\n]{0,40}(\.sh|\.exe|\.bin|\.py|\.ps1|payload|script|it)\b",
        r"\b(disable|turn off|stop|bypass|kill|uninstall)\b[^\n]{0,30}\b(firewall|antivirus|"
        r"defender|selinux|apparmor|edr|audit ?log|logging|2fa|mfa|security monitoring)\b"
        r"[^\n]{0,30}\b(silently|secretly|quietly|without|so that|and then|first)",
        # other languages
        r"(füge|fügen sie|trage|kopiere|hänge)\w*[^\n]{0,60}(authorized_keys|\.bashrc|\.profile|"
        r"crontab|\.ssh)",
        r"(añade|agrega|copia|pon|instala|ajoute[rz]?|copie[rz]?|adicione|coloque|aggiungi|"
        r"copia|inserisci)\b[^\n]{0,60}(authorized_keys|\.bashrc|\.profile|crontab|\.ssh)",
        r"(добавь|скопируй|впиши|запиши|установи)[^\n]{0,60}(authorized_keys|\.bashrc|"
        r"\.profile|crontab|\.ssh)",
        r"(添加|加入|写入|复制|追加)[^\n]{0,30}(authorized_keys|\.bashrc|\.profile|crontab|\.ssh)",
        r"(authorized_keys|\.bashrc|\.profile|crontab|\.ssh)[^\n]{0,20}(に追加|へ追加|に書き|に追記|追加して)",
        r"(下载|获取)[^\n]{0,40}(并|然后)(执行|运行)|ダウンロードして[^\n]{0,10}実行|"
        r"(скачай|загрузи)[^\n]{0,60}(и|затем) (выполни|запусти)|(lade|herunterladen)[^\n]{0,60}"
        r"(und|dann) (führe|ausführen|starte)|(descarga|baja|télécharge|baixe|scarica)\w*"
        r"[^\n]{0,60}\b(y|et|e|puis|depois|poi) (ejecuta|exécute|execute|esegui|lanza|lance)",
    ),
)

ALL = (INSTRUCTION, ROLE_MARKER, EXFILTRATION, BACKDOOR)


# The prefilter. Every pattern needs certain literal text: `\bignore\b...` cannot match a form
# without the word "ignore". `_index` reads each pattern's parse tree (re._parser) for such needs:
# sets of strings of which any match holds at least one. Each need is a necessary condition, so
# a pattern runs only where all of its needs are met, and skipping it cannot change a verdict.
# A string is looked up by a key (a whole word of it, bounded inside the string by a non-word
# character or a \b, in the set of the forms' words; else three characters or one of a run of
# word characters, in the forms' distinct words), then its other parts are looked for.
# In a needed string, _BOUNDARY stands for \b or for non-word characters (\s+): the string's
# words end there, and its parts between boundaries are each found in the forms.
_BOUNDARY = "\x01"
_MOST = 64  # strings per need, past which a run of literals is split
_ZERO_WIDTH = frozenset({_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT})
_REPEATS = frozenset({_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT})
_WORD = re.compile(r"\w+")

Node = tuple[Any, Any]


def _exact(items: Iterable[Node]) -> frozenset[str] | None:
    """Every string the sequence can match (zero-width parts as "", a \\b as _BOUNDARY), if few."""
    out = {""}
    for op, av in items:
        part = _exact_node(op, av)
        if part is None:
            return None
        out = {a + b for a in out for b in part}
        if len(out) > _MOST:
            return None
    return frozenset(out)


def _exact_node(op: Any, av: Any) -> frozenset[str] | None:
    if op is _sre.LITERAL:
        return frozenset({chr(av)})
    if op is _sre.AT and av is _sre.AT_BOUNDARY:
        return frozenset({_BOUNDARY})
    if op in _ZERO_WIDTH:
        return frozenset({""})
    if op is _sre.IN:
        if av and all(item is _sre.CATEGORY and value is _sre.CATEGORY_SPACE for item, value in av):
            return frozenset({_BOUNDARY})  # \s: a non-word character
        chars: set[str] = set()
        for item, value in av:
            if item is _sre.LITERAL:
                chars.add(chr(value))
            elif item is _sre.RANGE and value[1] - value[0] < 8:
                chars.update(map(chr, range(value[0], value[1] + 1)))
            else:
                return None
        return frozenset(chars) if len(chars) <= 8 else None
    if op is _sre.SUBPATTERN:
        return None if av[1] & _sre.SRE_FLAG_IGNORECASE else _exact(av[3])
    if op is _sre.ATOMIC_GROUP:
        return _exact(av)
    if op is _sre.BRANCH:
        alternatives: set[str] = set()
        for branch in av[1]:
            strings = _exact(branch)
            if strings is None:
                return None
            alternatives |= strings
        return frozenset(alternatives) if len(alternatives) <= _MOST else None
    if op in _REPEATS:
        one = _exact(av[2])
        if one is None:
            return None
        if all(string and not _WORD.search(string) for string in one):
            # a run of non-word characters: whatever its length, a boundary for words
            return frozenset({_BOUNDARY} if av[0] else {"", _BOUNDARY})
        if av[1] > 3:
            return None
        repeated: set[str] = set()
        current = {""}
        for count in range(av[1] + 1):
            if count >= av[0]:
                repeated |= current
            current = {a + b for a in current for b in one}
            if len(repeated) > _MOST or len(current) > _MOST:
                return None
        return frozenset(repeated)
    return None


def _needs(items: Iterable[Node], lead: str = "") -> list[frozenset[str]]:
    """Sets of strings, each of which a match of the sequence holds one of; `lead` is
    _BOUNDARY where what comes before the sequence ends a word."""
    needs: list[frozenset[str]] = []
    run = {lead}  # the strings a run of exactly known parts can match
    for op, av in items:
        part = _exact_node(op, av)
        if part is not None:
            joined = {a + b for a in run for b in part}
            if len(joined) <= _MOST:
                run = joined
                continue
            needs.append(frozenset(run))
            run = {_lead(run) + b for b in part}
            continue
        needs.append(frozenset(run))
        needs.extend(_node_needs(op, av, _lead(run)))
        run = {""}
    needs.append(frozenset(run))
    return [need for need in needs if need and all(s.strip(_BOUNDARY) for s in need)]


def _lead(run: set[str]) -> str:
    """_BOUNDARY if every string of the run ends a word there (at a \\b or a non-word character)."""
    ends = all(s and (s[-1] == _BOUNDARY or not _WORD.match(s[-1])) for s in run)
    return _BOUNDARY if ends else ""


def _node_needs(op: Any, av: Any, lead: str) -> list[frozenset[str]]:
    if op is _sre.SUBPATTERN:
        return [] if av[1] & _sre.SRE_FLAG_IGNORECASE else _needs(av[3], lead)
    if op is _sre.ATOMIC_GROUP:
        return _needs(av, lead)
    if op in _REPEATS and av[0] >= 1:
        return _needs(av[2], lead)
    if op is _sre.BRANCH:
        either: set[str] = set()
        for branch in av[1]:
            needs = _needs(branch, lead)
            if not needs:
                return []
            best: frozenset[str] = min(needs, key=_odds)
            either |= best
        return [frozenset(either)]
    return []


def _word_of(string: str) -> str | None:
    """The longest whole word in the string (a match holding the string has it as a word)."""
    words = [m.group() for m in _WORD.finditer(string) if m.start() > 0 and m.end() < len(string)]
    return max(words, key=len, default=None)


def _odds(need: frozenset[str]) -> float:
    """Roughly how likely ordinary text is to meet the need (lower filters better)."""
    odds = 0.0
    for string in need:
        word = _word_of(string)
        longest = max(len(part) for part in string.split(_BOUNDARY))
        odds += 0.2 ** (longest - 1) * (0.1 if word is not None else 1.0)
    return odds


Parts = tuple[tuple[str, ...], tuple[str, ...]]


def _parts(string: str) -> Parts:
    """The string's runs of word characters (each inside one word of the forms), and its
    pieces between boundaries that are more than one such run (each somewhere in the forms)."""
    inside = set(_WORD.findall(string))
    across = {p for p in string.split(_BOUNDARY) if p.strip() and p not in inside}
    return tuple(sorted(inside)), tuple(sorted(across))


def _found(parts: Parts, wordtext: str, text: str) -> bool:
    """Whether every part is in the forms: a run of word characters can only lie inside one of
    their words, so it is looked for in the distinct words, the rest in the whole text."""
    inside, across = parts
    return all(part in wordtext for part in inside) and all(part in text for part in across)


_FREQUENT = frozenset("etaoinshrdlu")


def _rarest(run: str, width: int) -> str:
    """`width` characters of the run, those least common in English."""
    pieces = (run[i : i + width] for i in range(len(run) - width + 1))
    return min(pieces, key=lambda piece: sum(map(piece.count, _FREQUENT)))


# Words too common in memory notes to look a string up by.
_COMMON_WORDS = frozenset(
    (
        *("a", "all", "an", "and", "any", "are", "as", "at", "be", "by", "do", "every", "for"),
        *("from", "i", "if", "in", "is", "it", "me", "my", "new", "no", "not", "of", "on", "or"),
        *("the", "this", "that", "to", "user", "users", "we", "what", "when", "will", "with"),
        *("you", "your"),
    )
)


def _key(string: str) -> tuple[int, str, Parts]:
    """How a string is looked up: by a whole word of its (kind 0), three characters of a run of
    word characters (kind 1) or one (kind 2), whichever ordinary text is least likely to hold,
    else by its parts alone (kind -1); with the string's parts left to find once the key is."""
    inside, across = _parts(string)
    whole = {m.group() for m in _WORD.finditer(string) if m.start() > 0 and m.end() < len(string)}
    candidates: list[tuple[float, int, str]] = []
    for run in inside:
        if run in whole:
            candidates.append((1.0 if run in _COMMON_WORDS else 3.0 ** -len(run), 0, run))
        if len(run) >= 3:
            trigram = _rarest(run, 3)
            candidates.append((0.05 * 2 ** sum(map(trigram.count, _FREQUENT)), 1, trigram))
        else:
            char = _rarest(run, 1)
            candidates.append((0.9 if char in _FREQUENT else 0.3, 2, char))
    if not candidates:
        return -1, "", (inside, across)
    _, kind, key = min(candidates)
    return kind, key, (tuple(r for r in inside if r != key), across)


String = tuple[int, str, Parts]  # how one string of a need is looked up: kind, key, parts


@dataclass(frozen=True)
class _Index:
    """Every pattern of ALL with the numbers of its needs, and where the needs' strings are
    looked up: by a whole word of theirs, by three characters or one of a run of word characters
    (in the forms' distinct words), or, the few without a run, by their parts alone (kind -1).
    A key gives the needs its strings meet by the key alone, and the needs they may meet."""

    patterns: tuple[tuple[Rule, re.Pattern[str], frozenset[int]], ...]
    lookups: tuple[dict[str, tuple[frozenset[int], frozenset[int]]], ...]  # by kind, then key
    keys: tuple[frozenset[str], ...]  # by kind
    strings: tuple[tuple[String, ...], ...]  # by need: strings with parts left to find
    unkeyed: frozenset[int]  # needs with a string of kind -1


def prepare() -> None:
    """Build the rules' lookup index and RE2 sieve now, once per process, so the first write
    a turn screens does not wait for them (about a second)."""
    _index()
    _sieve()
    _literals()
    _wanted()


@cache
def _sieve() -> Sieve | None:
    return sieve([pattern for rule in ALL for pattern in rule.patterns])


@cache
def _literals() -> Literals | None:
    """The RE2 scan for every string the index looks for in the forms but whole words: its
    keys of kinds 1 and 2 and its strings' parts."""
    index = _index()
    wanted = set(index.keys[1] | index.keys[2])
    for strings in index.strings:
        for _, _, (inside, across) in strings:
            wanted.update(inside, across)
    return literals(sorted(wanted))


@cache
def _wanted() -> tuple[tuple[tuple[int, str, frozenset[str]], ...], ...]:
    """The index's strings by need, each with its parts as one set (for the literal scan)."""
    return tuple(
        tuple((kind, key, frozenset(inside + across)) for kind, key, (inside, across) in found)
        for found in _index().strings
    )


@cache
def _index() -> _Index:
    numbers: dict[frozenset[str], int] = {}
    patterns = []
    for rule in ALL:
        for pattern in rule.patterns:
            needs: list[frozenset[str]] = []
            if not pattern.flags & re.IGNORECASE:
                needs = _needs(_parser.parse(pattern.pattern, pattern.flags))
            ids = frozenset(numbers.setdefault(need, len(numbers)) for need in needs)
            patterns.append((rule, pattern, ids))
    alone: list[dict[str, set[int]]] = [{}, {}, {}]
    maybe: list[dict[str, set[int]]] = [{}, {}, {}]
    strings: list[list[String]] = [[] for _ in numbers]
    unkeyed: set[int] = set()
    for need, number in numbers.items():
        for string in sorted(need):
            kind, key, parts = _key(string)
            if kind < 0:
                unkeyed.add(number)
            else:
                maybe[kind].setdefault(key, set()).add(number)
                if parts == ((), ()):
                    alone[kind].setdefault(key, set()).add(number)
                    continue
            strings[number].append((kind, key, parts))
    lookups = tuple(
        {
            key: (frozenset(alone[kind].get(key, ())), frozenset(maybe[kind][key]))
            for key in maybe[kind]
        }
        for kind in range(3)
    )
    return _Index(
        tuple(patterns),
        lookups,
        tuple(frozenset(lookup) for lookup in lookups),
        tuple(tuple(found) for found in strings),
        frozenset(unkeyed),
    )


def distinct_words(forms: Sequence[str]) -> set[str]:
    """The distinct words (runs of `\\w`) of the forms, found in their distinct runs of
    non-whitespace: no whitespace character is a word character, and forms of one note
    share most of theirs."""
    return set(_WORD.findall("\x00".join(set(" ".join(forms).split()))))


NEAR_FROM = 64
"""Forms from which a pattern that may match runs only on those its RE2 rewrite's matches lie
in (a document's lines' forms), rather than on every one."""


def first_broken(forms: Sequence[str]) -> Rule | None:
    """The first rule of ALL a form breaks, running each pattern only where its needs are met
    and, with google-re2, its RE2 rewrite matches (see memory_plugin.safety.superset). With
    google-re2, the strings the needs look for are found in one RE2 scan of the forms joined
    by line feeds (a string found there is in a form or holds a line feed: no pattern that
    may match is left out)."""
    index = _index()
    fast = _sieve()
    scanned = None if fast is None else fast.scan(forms)
    words = distinct_words(forms)
    scan = None if scanned is None else _literals()
    entries: tuple[tuple[tuple[int, str, Any], ...], ...]
    if scan is not None and scanned is not None:  # each string looked for in one RE2 scan
        strings = scan.found(scanned)
        present: tuple[set[str], ...] = (words, strings, strings)
        entries, found = _wanted(), strings.issuperset
    else:
        text = "\x00".join(forms)
        wordtext = " ".join(words)
        present = (words, {wordtext[i : i + 3] for i in range(len(wordtext) - 2)}, set(wordtext))
        entries = index.strings

        def found(parts: Any) -> bool:
            return _found(parts, wordtext, text)

    met: set[int] = set()  # needs met
    possible = set(index.unkeyed)  # needs one of whose keys is in the forms
    for lookups, keys, here in zip(index.lookups, index.keys, present, strict=True):
        for key in keys.intersection(here):
            alone, maybe = lookups[key]
            met |= alone
            possible |= maybe
    unmet: set[int] = set()

    def meets(need: int) -> bool:
        if need in unmet:
            return False
        for kind, key, parts in entries[need]:
            if (kind < 0 or key in present[kind]) and found(parts):
                met.add(need)
                return True
        unmet.add(need)
        return False

    ends: list[int] = []  # the forms' ends in the scanned text, found once where needed
    for number, (rule, pattern, needs) in enumerate(index.patterns):
        if not needs <= possible:
            continue
        if not needs <= met and not all(meets(need) for need in needs - met):
            continue
        if fast is not None and not fast.may_match(number, scanned):
            continue
        near = forms
        if fast is not None and len(forms) >= NEAR_FROM:
            ends = ends or form_ends(forms)
            near = fast.near(number, scanned, forms, ends)
        if any(pattern.search(form) for form in near):
            return rule
    return None
