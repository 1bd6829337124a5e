*** Settings ***
Documentation       The tally, a third-party area registered by entry point.
Library             tally_area.keywords.TallyLibrary
Test Setup          Start Tally


*** Test Cases ***
Increments Add One Each
    [Tags]    TL-001
    Increment Tally    4

A Reset Returns To Zero
    [Tags]    TL-002
    Increment Tally    2
    Reset Tally
