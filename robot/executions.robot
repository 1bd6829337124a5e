*** Settings ***
Documentation       The executions query, its statistics and a job's execution options
...                 (spec/lifecycle.yaml, LC-032..LC-035). A backend that does not claim
...                 execution-queries or execution-options skips these tests as not claimed.
Resource            lifecycle.resource
Test Tags           lifecycle


*** Test Cases ***
Consecutive Pages Hold Every Job Once Newest First
    [Tags]    LC-032
    Start Runtime    page_size=3
    FOR    ${alias}    IN    a    b    c    d    e
        Submit Job    ${alias}
    END
    Query Executions    limit=2
    Page Should Be    e    d
    Query Executions    offset=2    limit=2
    Page Should Be    c    b
    Query Executions    offset=4    limit=2
    Page Should Be    a
    Query Executions    offset=5
    Page Should Be

A Page Never Holds More Than The Page Size
    [Tags]    LC-032
    Start Runtime    page_size=3
    FOR    ${alias}    IN    a    b    c    d    e
        Submit Job    ${alias}
    END
    Query Executions
    Page Should Be    e    d    c
    Query Executions    limit=10
    Page Should Be    e    d    c

Filters Keep The Jobs Matching Each
    [Tags]    LC-033
    Start Runtime    slots=3
    Submit Job For Owner    a    ann    manual
    Submit Job For Owner    b    bob    schedule
    Submit Job For Owner    c    ann    schedule
    Submit Job    d
    Dispatch
    Job Raises    a    TimeoutError    Agent Took Too Long
    Job Raises    b    ValueError    bad prompt
    Job Returns    c    "ok"
    Job Owner And Trigger Should Be    a    ann    manual
    Job Owner And Trigger Should Be    d    ${None}
    Query Executions    status=failed
    Page Should Be    b    a
    Query Executions    trigger=schedule
    Page Should Be    c    b
    Query Executions    owners=ann, carol
    Page Should Be    c    a
    Query Executions    owners=${EMPTY}
    Page Should Be
    Query Executions    search=took too
    Page Should Be    a
    Query Executions    owners=ann    status=failed
    Page Should Be    a

A Window Of Hours Keeps A Job Submitted Exactly That Long Ago
    [Tags]    LC-033
    Start Runtime
    Submit Job    old
    Advance Clock    1
    Submit Job    edge
    Advance Clock    3600
    Submit Job    new
    Query Executions    hours=1
    Page Should Be    new    edge

Statistics Count Outcomes Within The Window And Active Jobs At Any Age
    [Tags]    LC-034
    Start Runtime    slots=1
    Submit Job For Owner    a    ann
    Submit Job For Owner    b    bob
    Submit Job For Owner    c    ann
    Dispatch
    Job Raises    a    ValueError    no
    Dispatch
    Job Returns    b    1
    Advance Clock    7200
    Submit Job For Owner    d    ann
    Dispatch
    Read Execution Stats
    Stats Should Be    4    1    1    1    1
    Read Execution Stats    hours=1
    Stats Should Be    1    0    0    1    1
    Read Execution Stats    owners=ann
    Stats Should Be    3    0    1    1    1

A Job's Options Reach Its Body And Stay On Its Record
    [Tags]    LC-035
    Start Runtime
    Submit Job With Options    a    {"model": "haiku", "temperature": 0.2}
    Submit Job    b
    Dispatch
    Job Returns    a    "done"
    Job Returns    b    "done"
    Job Options Should Be    a    {"model": "haiku", "temperature": 0.2}
    Job Body Should Have Been Handed Options    a    {"model": "haiku", "temperature": 0.2}
    Job Options Should Be    b    null
    Job Body Should Have Been Handed Options    b    null
