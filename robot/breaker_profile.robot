*** Settings ***
Documentation       The breaker with the active profile's own parameters (canonical: three
...                 auth failures, 30 s doubling to 300 s; pybreaker: five failures of any
...                 class, a fixed 60 s), CB-002 and CB-009.
Resource            breaker.resource
Test Setup          Start Breaker
Test Tags           breaker


*** Test Cases ***
The Profile's Threshold Trips And Its Cooldown Grows As It Says
    [Tags]    CB-002    CB-009
    Engage Breaker For    a
    Target Fails Below Threshold    a
    Breaker Should Be    a    closed
    Target Fails Calls    a    1    auth
    Breaker Should Be    a    open
    Cooldown Should Follow The Profile    a    0
    FOR    ${probe}    IN RANGE    1    4
        Wait Out Cooldown    a
        Call Arrives    a    p${probe}
        Call Ends    a    p${probe}    failure    auth
        Cooldown Should Follow The Profile    a    ${probe}
    END
