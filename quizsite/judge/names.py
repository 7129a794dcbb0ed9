"""Common given names, used only to decide whether an unmarked alternative names a person.

Why a list: capitalisation alone cannot tell "Rosalind Franklin" from "Swan Lake" or "Standard
Model", and only for people does quizbowl accept the surname alone by default. A line whose first
word is a given name (or a title such as Sir, Saint, Lady) is treated as a person's name; anything
else keeps the stricter rule (an incomplete answer is prompted). The list is deliberately modest:
a name missing from it costs a prompt, never a wrong accept.
"""

from __future__ import annotations

GIVEN_NAMES = frozenset(
    """
    aaron abe abraham ada adam adolf adolph agatha agnes ahmed aisha al alan albert alberto albrecht
    aldous alejandro aleksandr alessandro alexander alexandre alexandra alexei alexis alfred alfonso
    ali alice alicia allen alonzo alvin amadeus amanda amelia amos amy ana anders andre andrea andreas
    andrei andrew andy angela angelo ann anna anne annie anselm anthony antoine anton antonin antonio
    april archibald aretha ariel arnold arthur astrid attila audrey august augusta augustin augustus
    ava barack barbara barnabas bartholomew basil beatrice beatrix ben benedict benito benjamin bernard
    bertrand bessie beth betty bill billie billy bob bonnie boris bram brian bruce bruno buddy carl
    carla carlo carlos carol caroline carrie casimir catherine cecil cecilia cesar charles charlie
    charlotte chester chiang chris christian christina christine christopher clara clarence claude
    claudio clement clifford colin constance constantin cornelius cosimo craig cyril cyrus dale damon
    daniel dante daphne dario david dean deborah denis dennis desmond diana diane dick diego dietrich
    dmitri dmitry dolly dominic donald donatello doris dorothy douglas duke dwight earl ed eddie edgar
    edith edmund edna eduard edouard edvard edward edwin eileen elaine eleanor elena eli elias elijah
    eliza elizabeth ella ellen elliot elmer elsa elton elvis emil emile emilio emily emma emmanuel enrico
    enrique erasmus eric erich erik ernest ernesto ernst esther ethan eugene eugenio eva evan evelyn
    ezra fanny federico felix ferdinand fernando fidel filippo florence francesco francis francisco
    franco francois frank franklin franz fred frederic frederick fredrik frida friedrich fryderyk
    gabriel gabriele gabriela galileo gareth gary gaston gene geoffrey george georg georges georgia
    gerald gerard gerhard gertrude giacomo gian gianni gilbert gilles gina giovanni giorgio giovanna
    giulia giulio giuseppe gloria gordon grace graham gregor gregory greta guglielmo guido gustav
    gustave gustavo guy hannah hannibal hans harold harper harriet harry harvey hector heinrich helen
    helena henri henrietta henrik henry herbert herman hermann hilary homer horace horatio howard hugh
    hugo ian ibrahim ida ignatius igor ilya immanuel ingrid irene iris isaac isabel isabella isaiah
    ivan jack jackie jackson jacob jacques james jan jane janet janis jason jean jeanne jeff jefferson
    jennifer jeremy jerome jesse jessica jim jimi jimmy joan joanna joe johann johannes john johnny
    jonathan jorge jose josef joseph josephine joshua juan judith jules julia julian julie julius june
    justin karen karl kate katherine kathleen keith ken kenneth kevin kim kurt lajos larry laura
    lawrence lee leo leon leonard leonardo leonhard leopold leslie lev lewis lillian linda lionel lisa
    lorenzo louis louisa louise lucas lucia lucius lucy ludwig luigi luis luke lyndon mahatma malcolm
    manuel marc marcel marco marcus margaret margarethe maria marie marilyn mario marion mark marko
    martha martin mary matthew matthias maurice max maximilian maya melvin michael michel michelangelo
    miguel mikhail miles milton miriam mohammed molly muhammad nancy napoleon natalie nathan nathaniel
    neil nelson niccolo nicholas nicolas nicolaus niels nikita nikola nikolai nina noah noam norman
    octavia octavio olaf olga oliver olivia omar orson oscar otto pablo paolo patricia patrick paul
    paula pauline pearl pedro percy peter philip philippe phillip phyllis pierre pietro piotr pyotr
    rachel rafael ralph ramon randolph raphael raymond rebecca rene richard rita robert roberto robin
    roger roland ronald rosa rosalind rose ruby rudolf rudolph rudyard rupert russell ruth ryan sally
    salvador samuel sandra sara sarah saul scott sean sebastian sergei sergey sherlock sidney sigmund
    simon simone sofia sophia sophie stanley stefan stephen steve steven susan sylvia ted teresa
    theodor theodore thomas thurgood tim timothy toni tony ulysses umberto ursula valentina valentine
    vasily vera victor victoria vincent virgil virginia vladimir walt walter wassily wilhelm will
    william willie winston wolfgang woodrow yuri zora
    """.split()
)

# Words that can stand where a given name would ("Sir Isaac Newton", "Lady Gaga", "Don Quixote").
TITLES = frozenset("sir dame lady lord don dona saint st king queen emperor empress pope tsar czar".split())

# Short forms a player may use for a line's given name ("Abe Lincoln", "Teddy Roosevelt").
NICKNAMES = {
    "abe": "abraham",
    "bill": "william",
    "will": "william",
    "billy": "william",
    "bob": "robert",
    "rob": "robert",
    "bobby": "robert",
    "dick": "richard",
    "rich": "richard",
    "ted": "edward",
    "ed": "edward",
    "eddie": "edward",
    "teddy": "theodore",
    "jim": "james",
    "jimmy": "james",
    "jack": "john",
    "johnny": "john",
    "tom": "thomas",
    "fred": "frederick",
    "alex": "alexander",
    "liz": "elizabeth",
    "beth": "elizabeth",
    "betty": "elizabeth",
    "kate": "katherine",
    "tony": "anthony",
    "mike": "michael",
    "nick": "nicholas",
    "pete": "peter",
    "joe": "joseph",
    "sam": "samuel",
    "andy": "andrew",
    "chuck": "charles",
    "charlie": "charles",
    "harry": "henry",
    "hank": "henry",
    "peggy": "margaret",
    "meg": "margaret",
    "ike": "dwight",
    "fdr": "franklin",
}

# Names in the original language for places and works whose English name differs, accepted only
# where a line says "accept equivalents" (a line that lists the original name needs no table).
# No offline library maps exonyms; this short list is taken from the English Wikipedia articles'
# native names (cities: "Exonym and endonym" examples; works: each article's original title).
EXONYMS: dict[str, tuple[str, ...]] = {
    "munich": ("munchen",),
    "cologne": ("koln",),
    "vienna": ("wien",),
    "florence": ("firenze",),
    "venice": ("venezia",),
    "naples": ("napoli",),
    "rome": ("roma",),
    "milan": ("milano",),
    "turin": ("torino",),
    "genoa": ("genova",),
    "prague": ("praha",),
    "warsaw": ("warszawa",),
    "moscow": ("moskva",),
    "athens": ("athina", "athinai"),
    "lisbon": ("lisboa",),
    "seville": ("sevilla",),
    "brussels": ("bruxelles", "brussel"),
    "the hague": ("den haag", "s gravenhage"),
    "copenhagen": ("kobenhavn",),
    "beijing": ("peking",),
    "guernica": ("gernika",),
    "germany": ("deutschland",),
    "spain": ("espana",),
    "japan": ("nippon", "nihon"),
    "the magic mountain": ("der zauberberg", "zauberberg"),
    "the magic flute": ("die zauberflote", "zauberflote"),
    "the barber of seville": ("il barbiere di siviglia", "barbiere di siviglia"),
    "the marriage of figaro": ("le nozze di figaro", "nozze di figaro"),
    "the metamorphosis": ("die verwandlung", "verwandlung"),
    "the little prince": ("le petit prince", "petit prince"),
    "the divine comedy": ("divina commedia", "la divina commedia"),
    "the trial": ("der prozess",),
    "the stranger": ("l etranger", "etranger"),
    "war and peace": ("voina i mir",),
    "crime and punishment": ("prestuplenie i nakazanie",),
    "the ring of the nibelung": ("der ring des nibelungen", "ring des nibelungen"),
    "the rite of spring": ("le sacre du printemps", "sacre du printemps"),
    "the well tempered clavier": ("das wohltemperierte klavier",),
    "the night watch": ("de nachtwacht", "nachtwacht"),
    "the prince": ("il principe",),
    "quran": ("koran",),
}
